package io.github.ratelimit.e2e;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Base64;

/**
 * A small HTTP client for tests against the server on loopback.
 */
final class HttpTestClient {

	private final HttpClient client = HttpClient.newBuilder()
		.connectTimeout(Duration.ofSeconds(5))
		.version(HttpClient.Version.HTTP_1_1)
		.followRedirects(HttpClient.Redirect.NEVER)
		.build();

	/** What {@link #getOrHangUp} returns when it hung up before an answer. */
	static final int HUNG_UP = -1;

	private final int port;

	HttpTestClient(int port) {
		this.port = port;
	}

	HttpResponse<String> get(String path, String... headers) {
		return send(request(path, headers).GET().build());
	}

	HttpResponse<String> head(String path, String... headers) {
		return send(request(path, headers).method("HEAD", HttpRequest.BodyPublishers.noBody()).build());
	}

	HttpResponse<String> options(String path, String... headers) {
		return send(request(path, headers).method("OPTIONS", HttpRequest.BodyPublishers.noBody()).build());
	}

	HttpResponse<String> delete(String path, String... headers) {
		return send(request(path, headers).DELETE().build());
	}

	HttpResponse<String> post(String path, String form, String... headers) {
		return send(request(path, headers).header("Content-Type", "application/x-www-form-urlencoded")
			.POST(HttpRequest.BodyPublishers.ofString(form))
			.build());
	}

	/**
	 * Sends a GET request byte for byte, as a client that ignores the rules would: header
	 * values may hold control characters that {@link HttpClient} refuses to send.
	 * @param localAddress the loopback address to connect from, such as {@code 127.0.0.2}
	 * @param path the path
	 * @param headers names and values, in pairs; each character is sent as one byte
	 * @return the status code of the response
	 */
	int rawGet(String localAddress, String path, String... headers) {
		StringBuilder head = new StringBuilder("GET ").append(path).append(" HTTP/1.1\r\n");
		head.append("Host: 127.0.0.1:").append(this.port).append("\r\n");
		for (int i = 0; i < headers.length; i += 2) {
			head.append(headers[i]).append(": ").append(headers[i + 1]).append("\r\n");
		}
		head.append("Connection: close\r\n\r\n");
		try (Socket socket = new Socket()) {
			socket.bind(new InetSocketAddress(InetAddress.getByName(localAddress), 0));
			socket.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), this.port), 5_000);
			socket.setSoTimeout(10_000);
			socket.getOutputStream().write(head.toString().getBytes(StandardCharsets.ISO_8859_1));
			socket.getOutputStream().flush();
			BufferedReader reader = new BufferedReader(
					new InputStreamReader(socket.getInputStream(), StandardCharsets.ISO_8859_1));
			String statusLine = reader.readLine();
			if (statusLine == null || !statusLine.startsWith("HTTP/1.1 ")) {
				throw new IllegalStateException("No HTTP response: " + statusLine);
			}
			return Integer.parseInt(statusLine.substring(9, 12));
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

	/**
	 * Reads a streamed answer until it has seen a number of lines containing some text,
	 * then hangs up.
	 * @param path the path to get
	 * @param marker what the counted lines contain
	 * @param lines how many such lines to read
	 * @return whether they all arrived before the answer ended
	 */
	boolean readLinesAndHangUp(String path, String marker, int lines) {
		String head = "GET " + path + " HTTP/1.1\r\nHost: 127.0.0.1:" + this.port + "\r\n\r\n";
		try (Socket socket = new Socket()) {
			socket.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), this.port), 5_000);
			socket.setSoTimeout(10_000);
			socket.getOutputStream().write(head.getBytes(StandardCharsets.ISO_8859_1));
			socket.getOutputStream().flush();
			BufferedReader reader = new BufferedReader(
					new InputStreamReader(socket.getInputStream(), StandardCharsets.UTF_8));
			int seen = 0;
			String line;
			while (seen < lines && (line = reader.readLine()) != null) {
				if (line.contains(marker)) {
					seen++;
				}
			}
			return seen == lines;
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

	/**
	 * Sends a GET request and waits for the status line at most {@code patience}; then hangs
	 * up, resetting the connection, as a client that timed out does.
	 * @param path the path
	 * @param patience how long to wait for the answer to begin
	 * @param headers names and values, in pairs
	 * @return the status code, or {@link #HUNG_UP}
	 */
	int getOrHangUp(String path, Duration patience, String... headers) {
		StringBuilder head = new StringBuilder("GET ").append(path).append(" HTTP/1.1\r\n");
		head.append("Host: 127.0.0.1:").append(this.port).append("\r\n");
		for (int i = 0; i < headers.length; i += 2) {
			head.append(headers[i]).append(": ").append(headers[i + 1]).append("\r\n");
		}
		head.append("Connection: close\r\n\r\n");
		try (Socket socket = new Socket()) {
			socket.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), this.port), 5_000);
			socket.setSoTimeout((int) Math.max(1, patience.toMillis()));
			socket.getOutputStream().write(head.toString().getBytes(StandardCharsets.ISO_8859_1));
			socket.getOutputStream().flush();
			BufferedReader reader = new BufferedReader(
					new InputStreamReader(socket.getInputStream(), StandardCharsets.ISO_8859_1));
			try {
				String statusLine = reader.readLine();
				if (statusLine == null || !statusLine.startsWith("HTTP/1.1 ")) {
					throw new IllegalStateException("No HTTP response: " + statusLine);
				}
				return Integer.parseInt(statusLine.substring(9, 12));
			}
			catch (SocketTimeoutException ex) {
				// closed with a reset, not a polite FIN
				socket.setSoLinger(true, 0);
				return HUNG_UP;
			}
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

	static String[] basic(String user, String password) {
		String token = Base64.getEncoder().encodeToString((user + ":" + password).getBytes(StandardCharsets.UTF_8));
		return new String[] { "Authorization", "Basic " + token };
	}

	private HttpRequest.Builder request(String path, String... headers) {
		HttpRequest.Builder builder = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + this.port + path))
			.timeout(Duration.ofSeconds(10));
		if (headers.length > 0) {
			builder.headers(headers);
		}
		return builder;
	}

	private HttpResponse<String> send(HttpRequest request) {
		try {
			return this.client.send(request, HttpResponse.BodyHandlers.ofString());
		}
		catch (IOException ex) {
			throw new IllegalStateException(ex);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
	}

}
