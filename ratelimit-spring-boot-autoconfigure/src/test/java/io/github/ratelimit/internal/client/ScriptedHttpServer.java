package io.github.ratelimit.internal.client;

import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.LinkedBlockingQueue;

/**
 * A small HTTP/1.1 server on a free loopback port that answers each request with the next
 * scripted response, one request per connection, and records what it received. Unlike the
 * JDK's {@code HttpServer}, which always sets {@code Date} itself, it sends exactly the
 * scripted headers, so a test decides whether a response carries a {@code Date} and which.
 */
public final class ScriptedHttpServer implements AutoCloseable {

	private final ServerSocket serverSocket;

	private final BlockingQueue<Response> script = new LinkedBlockingQueue<>();

	private final List<Request> requests = new CopyOnWriteArrayList<>();

	private final Thread acceptor;

	public ScriptedHttpServer() throws IOException {
		this.serverSocket = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
		this.acceptor = new Thread(this::serve, "scripted-http-server");
		this.acceptor.setDaemon(true);
		this.acceptor.start();
	}

	/**
	 * Appends a response to the script.
	 * @param status the status code
	 * @param body the body, sent as text/plain
	 * @param headers alternating names and values
	 * @return this server
	 */
	public ScriptedHttpServer respond(int status, String body, String... headers) {
		Map<String, String> fields = new LinkedHashMap<>();
		for (int i = 0; i < headers.length; i += 2) {
			fields.put(headers[i], headers[i + 1]);
		}
		this.script.add(new Response(status, fields, body));
		return this;
	}

	/**
	 * Appends the same response several times.
	 */
	public ScriptedHttpServer respondTimes(int times, int status, String body, String... headers) {
		for (int i = 0; i < times; i++) {
			respond(status, body, headers);
		}
		return this;
	}

	public URI uri(String path) {
		return URI.create("http://127.0.0.1:" + this.serverSocket.getLocalPort() + path);
	}

	public List<Request> requests() {
		return this.requests;
	}

	@Override
	public void close() throws IOException {
		this.serverSocket.close();
	}

	private void serve() {
		while (!this.serverSocket.isClosed()) {
			try (Socket socket = this.serverSocket.accept()) {
				socket.setSoTimeout(10_000);
				exchange(socket);
			}
			catch (IOException ex) {
				// closed by the test, or a client that went away: next connection
			}
		}
	}

	private void exchange(Socket socket) throws IOException {
		InputStream in = new BufferedInputStream(socket.getInputStream());
		String[] requestLine = line(in).split(" ");
		Map<String, String> headers = new LinkedHashMap<>();
		for (String line = line(in); !line.isEmpty(); line = line(in)) {
			int colon = line.indexOf(':');
			headers.put(line.substring(0, colon).trim().toLowerCase(Locale.ROOT), line.substring(colon + 1).trim());
		}
		byte[] body;
		if ("chunked".equalsIgnoreCase(headers.get("transfer-encoding"))) {
			body = chunks(in);
		}
		else {
			body = in.readNBytes(Integer.parseInt(headers.getOrDefault("content-length", "0")));
		}
		this.requests.add(new Request(requestLine[0], requestLine[1], headers, body));
		Response response = this.script.poll();
		if (response == null) {
			response = new Response(500, Map.of(), "no scripted response left");
		}
		byte[] content = response.body().getBytes(StandardCharsets.UTF_8);
		StringBuilder head = new StringBuilder("HTTP/1.1 " + response.status() + " Scripted\r\n");
		response.headers().forEach((name, value) -> head.append(name).append(": ").append(value).append("\r\n"));
		head.append("Content-Type: text/plain;charset=UTF-8\r\n");
		head.append("Content-Length: ").append(content.length).append("\r\nConnection: close\r\n\r\n");
		OutputStream out = socket.getOutputStream();
		out.write(head.toString().getBytes(StandardCharsets.ISO_8859_1));
		out.write(content);
		out.flush();
	}

	private static byte[] chunks(InputStream in) throws IOException {
		ByteArrayOutputStream body = new ByteArrayOutputStream();
		for (int size = Integer.parseInt(line(in).split(";")[0].trim(), 16); size > 0; size = Integer
			.parseInt(line(in).split(";")[0].trim(), 16)) {
			body.write(in.readNBytes(size));
			line(in);
		}
		while (!line(in).isEmpty()) {
			// trailer fields
		}
		return body.toByteArray();
	}

	private static String line(InputStream in) throws IOException {
		ByteArrayOutputStream line = new ByteArrayOutputStream();
		for (int b = in.read(); b != '\n'; b = in.read()) {
			if (b < 0) {
				throw new IOException("connection closed mid-request");
			}
			if (b != '\r') {
				line.write(b);
			}
		}
		return line.toString(StandardCharsets.ISO_8859_1);
	}

	public record Request(String method, String path, Map<String, String> headers, byte[] body) {
	}

	record Response(int status, Map<String, String> headers, String body) {
	}

}
