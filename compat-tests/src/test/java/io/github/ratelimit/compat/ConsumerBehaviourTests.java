package io.github.ratelimit.compat;

import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Locale;

import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.web.server.LocalServerPort;

import io.github.ratelimit.test.TestRateLimitClock;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What a client of {@link ConsumerApplication} sees over HTTP, on a real server of either
 * web stack and either store. Buckets are forgotten and the clock set back before each
 * test ({@code @AutoConfigureRateLimitTest}). Every request has a deadline of ten
 * seconds, so a connection that stops answering fails the test rather than hanging it.
 */
abstract class ConsumerBehaviourTests {

	private static final Duration DEADLINE = Duration.ofSeconds(10);

	/** Reuses its keep-alive connections from test to test, as a client of a service does. */
	private static final HttpClient CLIENT = HttpClient.newBuilder()
		.version(HttpClient.Version.HTTP_1_1)
		.connectTimeout(DEADLINE)
		.build();

	@LocalServerPort
	int port;

	@Autowired
	TestRateLimitClock clock;

	@Test
	void handlerLimitAnswersTheFourthRequestWithAProblem() {
		for (int i = 1; i <= 3; i++) {
			HttpResponse<String> admitted = get("/things/" + i);
			assertThat(admitted.statusCode()).isEqualTo(200);
			assertThat(admitted.body()).isEqualTo("thing " + i);
			assertThat(admitted.headers().firstValue("RateLimit")).isPresent();
		}
		HttpResponse<String> rejected = get("/things/4");
		assertThat(rejected.statusCode()).isEqualTo(429);
		assertThat(rejected.headers().firstValue("Retry-After")).hasValue("1200");
		assertThat(rejected.headers().firstValue("Content-Type"))
			.hasValueSatisfying((type) -> assertThat(type).startsWith("application/problem+json"));
		assertThat(rejected.body()).contains("\"status\":429", "\"violated-policies\":[\"GET /things/{id}\"]");
	}

	@Test
	void catchAllExceptionHandlerAnswersFailuresButNotRejections() {
		HttpResponse<String> failed = get(ConsumerApplication.FAILING);
		assertThat(failed.statusCode()).isEqualTo(500);
		assertThat(failed.body()).isEqualTo("caught IllegalStateException");
		for (int i = 1; i <= 3; i++) {
			assertThat(get("/things/" + i).statusCode()).isEqualTo(200);
		}
		HttpResponse<String> rejected = get("/things/4");
		assertThat(rejected.statusCode()).isEqualTo(429);
		assertThat(rejected.body()).doesNotContain("caught");
	}

	@Test
	void routeLimitAnswersTheFourthRequestAndTheQuotaComesBackWithTheClock() {
		for (int i = 1; i <= 3; i++) {
			assertThat(get("/routed/" + i).statusCode()).isEqualTo(200);
		}
		HttpResponse<String> rejected = get("/routed/4");
		assertThat(rejected.statusCode()).isEqualTo(429);
		assertThat(rejected.headers().firstValue("Retry-After")).hasValue("1200");
		assertThat(rejected.body()).contains("\"violated-policies\":[\"GET /routed/**\"]");
		this.clock.advance(Duration.ofMinutes(20));
		assertThat(get("/routed/5").statusCode()).isEqualTo(200);
	}

	@Test
	void keepAliveConnectionsKeepAnsweringAfterRouteRejections() {
		for (int i = 1; i <= 3; i++) {
			assertThat(get("/routed/" + i).statusCode()).isEqualTo(200);
		}
		for (int i = 0; i < 20; i++) {
			assertThat(get("/routed/more").statusCode()).as("rejection %d", i).isEqualTo(429);
			assertThat(get("/plain").statusCode()).as("plain request after rejection %d", i).isEqualTo(200);
		}
	}

	/**
	 * A request that arrives while the previous answer on its connection is still being
	 * written waits in the server's queue; the route limit then rejects it. The connection
	 * must go on reading (reactor/reactor-netty#4361 on Reactor Netty before 1.3.8).
	 */
	@Test
	void connectionGoesOnAfterARouteRejectionOfARequestThatWaitedBehindAnother() throws IOException {
		for (int i = 1; i <= 3; i++) {
			assertThat(get("/routed/" + i).statusCode()).isEqualTo(200);
		}
		try (Socket socket = connect()) {
			OutputStream out = socket.getOutputStream();
			DataInputStream in = new DataInputStream(socket.getInputStream());
			send(out, request("GET", "/later", null) + request("GET", "/routed/4", null));
			assertThat(readStatus(in)).isEqualTo(200);
			assertThat(readStatus(in)).isEqualTo(429);
			for (int i = 0; i < 3; i++) {
				send(out, request("GET", "/plain", null));
				assertThat(readStatus(in)).as("plain request %d on the same connection", i).isEqualTo(200);
				send(out, request("GET", "/routed/more", null));
				assertThat(readStatus(in)).as("rejection %d on the same connection", i).isEqualTo(429);
			}
		}
	}

	@Test
	void connectionGoesOnAfterARouteRejectionOfAnUploadThatWaitedBehindAnother() throws IOException {
		try (Socket socket = connect()) {
			OutputStream out = socket.getOutputStream();
			DataInputStream in = new DataInputStream(socket.getInputStream());
			send(out, request("POST", "/uploads/1", "hello"));
			assertThat(readStatus(in)).isEqualTo(200);
			send(out, request("GET", "/later", null) + request("POST", "/uploads/2", "hello again"));
			assertThat(readStatus(in)).isEqualTo(200);
			assertThat(readStatus(in)).isEqualTo(429);
			send(out, request("GET", "/plain", null));
			assertThat(readStatus(in)).as("plain request on the same connection").isEqualTo(200);
		}
	}

	HttpResponse<String> get(String path) {
		HttpRequest request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + this.port + path))
			.timeout(DEADLINE)
			.build();
		try {
			return CLIENT.send(request, HttpResponse.BodyHandlers.ofString());
		}
		catch (IOException ex) {
			throw new IllegalStateException("GET " + path + " got no answer", ex);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
	}

	private Socket connect() throws IOException {
		Socket socket = new Socket(InetAddress.getLoopbackAddress(), this.port);
		socket.setSoTimeout((int) DEADLINE.toMillis());
		return socket;
	}

	private String request(String method, String path, String body) {
		String head = method + " " + path + " HTTP/1.1\r\nHost: 127.0.0.1:" + this.port + "\r\n";
		if (body == null) {
			return head + "\r\n";
		}
		return head + "Content-Type: text/plain\r\nContent-Length: " + body.length() + "\r\n\r\n" + body;
	}

	private static void send(OutputStream out, String requests) throws IOException {
		out.write(requests.getBytes(StandardCharsets.ISO_8859_1));
		out.flush();
	}

	/** Reads one response, whose body has a Content-Length or is chunked, and returns its status. */
	private static int readStatus(DataInputStream in) throws IOException {
		String statusLine = readLine(in);
		int length = 0;
		boolean chunked = false;
		for (String line = readLine(in); !line.isEmpty(); line = readLine(in)) {
			String header = line.toLowerCase(Locale.ROOT);
			if (header.startsWith("content-length:")) {
				length = Integer.parseInt(header.substring("content-length:".length()).trim());
			}
			chunked |= header.startsWith("transfer-encoding:") && header.contains("chunked");
		}
		if (chunked) {
			for (int size = Integer.parseInt(readLine(in).trim(), 16); size > 0; size = Integer
				.parseInt(readLine(in).trim(), 16)) {
				in.readFully(new byte[size]);
				readLine(in);
			}
			readLine(in);
		}
		else {
			in.readFully(new byte[length]);
		}
		return Integer.parseInt(statusLine.split(" ")[1]);
	}

	private static String readLine(DataInputStream in) throws IOException {
		StringBuilder line = new StringBuilder();
		for (int b = in.read(); b != '\n'; b = in.read()) {
			if (b < 0) {
				throw new EOFException("connection closed after " + line);
			}
			if (b != '\r') {
				line.append((char) b);
			}
		}
		return line.toString();
	}

}
