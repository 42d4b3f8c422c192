package io.github.ratelimit.e2e;

import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import reactor.blockhound.BlockHound;
import reactor.blockhound.BlockingOperationError;
import reactor.core.scheduler.ReactorBlockHoundIntegration;

import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.test.context.ActiveProfiles;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The behaviour suite on the reactive front end: a real Netty server with reactive Spring
 * Security, with BlockHound watching the server's event loops, so a blocking call made
 * while a request is limited fails the request.
 */
@SpringBootTest(classes = ReactiveE2eApplication.class, webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = "spring.main.web-application-type=reactive")
@ActiveProfiles("frontend")
class ReactiveFrontEndBehaviourTests extends FrontEndBehaviourTests {

	private static boolean installed;

	/**
	 * Installs BlockHound for every reactive suite of this JVM, whichever runs first: it is
	 * installed once, so all of them share this one configuration.
	 */
	@BeforeAll
	static synchronized void detectBlockingCalls() {
		if (installed) {
			return;
		}
		installed = true;
		BlockHound.builder()
			.with(new ReactorBlockHoundIntegration())
			.nonBlockingThreadPredicate((current) -> current.or((thread) -> thread.getName().startsWith("reactor-http-")))
			// Spring's caches of annotation metadata lock while they grow, on a handler's first calls
			.allowBlockingCallsInside("org.springframework.util.ConcurrentReferenceHashMap$Segment", "doTask")
			// Lettuce's asynchronous send waits briefly while a reconnect holds its endpoint,
			// as its own reactive API does on event loops
			.allowBlockingCallsInside("io.lettuce.core.protocol.SharedLock", "incrementWriters")
			// a blocking store's call is handed to its own bounded pool: the pool's queue locks
			// for the moment of the hand-off, as Reactor's own schedulers do
			.allowBlockingCallsInside("io.github.ratelimit.internal.atomic.BlockingOffload", "submit")
			// an event loop that is shutting down waits for its last tasks: Netty's, not ours
			.allowBlockingCallsInside("io.netty.util.concurrent.SingleThreadEventExecutor", "confirmShutdown")
			// Netty's pooled allocator locks a group of buffer magazines while it adds one, when
			// threads allocating at once contend for them; Netty's own BlockHound integration
			// allows its other allocator locks but not this one (4.2.15), and any reactive
			// response body allocates there, ours or not
			.allowBlockingCallsInside("io.netty.buffer.AdaptivePoolingAllocator$MagazineGroup", "tryExpandMagazines")
			// the console appender locks its stream while another thread writes a line. The error
			// BlockHound throws there loses the line and escapes from whatever logged it, such as
			// Reactor Netty's handlers at DEBUG, leaving a connection without an answer. Logging
			// is the application's choice, not ours.
			.allowBlockingCallsInside("ch.qos.logback.core.OutputStreamAppender", "writeBytes")
			.install();
	}

	@Override
	boolean releasesBeforeTheClientSeesTheAnswer() {
		return true;
	}

	@Override
	void advance(Duration duration) {
		ReactiveE2eApplication.advance(duration);
	}

	@Test
	void aHandlerSettlesWhatItReportsToTheUsageInItsReactorContext() {
		assertThat(this.http.get("/costs/context?estimate=400&used=40").statusCode()).isEqualTo(200);
		HttpResponse<String> next = this.http.get("/costs/context?estimate=1&used=1");
		assertThat(next.headers().firstValue("RateLimit"))
			.hasValueSatisfying((value) -> assertThat(value).startsWith("\"context-tokens\";r=959;"));
	}

	@Test
	void aStreamWhoseClientCancelsSettlesWhatItReportedSoFar() throws InterruptedException {
		ReactiveSettlingHandlers.CANCELLED.drainPermits();
		assertThat(this.http.readLinesAndHangUp("/costs/stream/held?estimate=500&chunks=3&perChunk=20&hold=true",
				"part", 3))
			.isTrue();
		// the handler's stream hears of the cancellation after the settlement, which wraps it
		assertThat(ReactiveSettlingHandlers.CANCELLED.tryAcquire(10, TimeUnit.SECONDS)).isTrue();
		HttpResponse<String> next = this.http.get("/costs/stream/held?estimate=1&chunks=1&perChunk=1&hold=false");
		// 1000 - 60 reported - 1 reserved by this call
		assertThat(next.headers().firstValue("RateLimit"))
			.hasValueSatisfying((value) -> assertThat(value).startsWith("\"held-tokens\";r=939;"));
	}

	@Test
	void anEventStreamSettlesTheActualCostItsLastEventCarries() {
		HttpResponse<String> streamed = this.http.get("/costs/stream/events?estimate=500&chunks=4&used=70");
		assertThat(streamed.statusCode()).isEqualTo(200);
		assertThat(streamed.body()).contains("\"totalTokens\":70");
		HttpResponse<String> next = this.http.get("/costs/stream/events?estimate=1&chunks=1&used=1");
		// 1000 - 70 - 1 reserved by this call
		assertThat(next.headers().firstValue("RateLimit"))
			.hasValueSatisfying((value) -> assertThat(value).startsWith("\"event-tokens\";r=929;"));
	}

	@Test
	void onlyRequestsThatMayReachALimitedHandlerAreRoutedBeforeTheDispatcher() {
		ReactiveE2eApplication.HANDLER_LOOKUPS.clear();
		// no limited handler's pattern matches: routed once, by the dispatcher
		assertThat(this.http.get("/later").statusCode()).isEqualTo(200);
		// a limited handler: routed by the limiter to decide its limits, then by the dispatcher
		assertThat(this.http.get("/things/lookups").statusCode()).isEqualTo(200);
		assertThat(ReactiveE2eApplication.HANDLER_LOOKUPS.get("/later")).hasValue(1);
		assertThat(ReactiveE2eApplication.HANDLER_LOOKUPS.get("/things/lookups")).hasValue(2);
	}

	@Test
	void aStreamingResponseHoldsItsConcurrencyPermitUntilItsBodyEnds() throws Exception {
		ExportGate.close();
		CompletableFuture<HttpResponse<String>> streaming = CompletableFuture
			.supplyAsync(() -> this.http.get("/export-stream/1"));
		// its first line is written, so its response has committed, and it is still running
		assertThat(ExportGate.awaitEntered()).isTrue();
		assertThat(this.http.get("/export-stream-now/2").statusCode()).isEqualTo(429);
		ExportGate.open();
		HttpResponse<String> streamed = streaming.get(10, TimeUnit.SECONDS);
		assertThat(streamed.statusCode()).isEqualTo(200);
		assertThat(streamed.body()).contains("start of export 1", "end of export 1");
		assertThat(this.http.get("/export-stream-now/3").statusCode()).isEqualTo(200);
	}

	@Test
	void anErrorAnsweredOutsideTheFiltersCountsByItsStatus() {
		// the route limit counts only 5xx: the 503 WebFlux writes for the filter's error counts
		assertThat(this.http.get("/failing-filter").statusCode()).isEqualTo(503);
		assertThat(this.http.get("/failing-filter").statusCode()).isEqualTo(503);
		assertThat(this.http.get("/failing-filter").statusCode()).isEqualTo(429);
	}

	/**
	 * A request that arrives on a keep-alive connection before the previous answer has
	 * finished waits in Reactor Netty's queue; a route limit's 429 answers it at once. Reactor
	 * Netty before 1.3.8 then stopped reading the connection, so the client's next request
	 * was never answered (reactor/reactor-netty#4361). Pipelining the two requests makes the
	 * wait certain.
	 */
	@Test
	void connectionKeepsAnsweringAfterARouteRejectionOfARequestThatWaitedBehindAnother() throws IOException {
		assertThat(this.http.get("/daily/1").statusCode()).isEqualTo(200);
		assertThat(this.http.get("/daily/2").statusCode()).isEqualTo(200);
		try (Socket socket = connect()) {
			OutputStream out = socket.getOutputStream();
			DataInputStream in = new DataInputStream(socket.getInputStream());
			out.write((request("/later") + request("/daily/3")).getBytes(StandardCharsets.ISO_8859_1));
			out.flush();
			assertThat(readResponse(in).status()).isEqualTo(200);
			assertThat(readResponse(in).status()).isEqualTo(429);
			for (int i = 4; i < 7; i++) {
				out.write(request("/daily/" + i).getBytes(StandardCharsets.ISO_8859_1));
				out.flush();
				assertThat(readResponse(in).status()).as("answer to request %d on the same connection", i).isEqualTo(429);
			}
		}
	}

	/**
	 * The same wait for a request with a body: the route limit's answer waits for the body,
	 * drops it, and the connection goes on.
	 */
	@Test
	void connectionKeepsAnsweringAfterARouteRejectionOfARequestWithABody() throws IOException {
		assertThat(this.http.get("/uploads/0").statusCode()).isNotEqualTo(429);
		try (Socket socket = connect()) {
			OutputStream out = socket.getOutputStream();
			DataInputStream in = new DataInputStream(socket.getInputStream());
			String upload = "POST /uploads/1 HTTP/1.1\r\nHost: 127.0.0.1:" + this.port
					+ "\r\nContent-Type: text/plain\r\nContent-Length: 5\r\n\r\nhello";
			out.write((request("/later") + upload).getBytes(StandardCharsets.ISO_8859_1));
			out.flush();
			assertThat(readResponse(in).status()).isEqualTo(200);
			Response rejected = readResponse(in);
			assertThat(rejected.status()).isEqualTo(429);
			assertThat(rejected.headers()).doesNotContain("connection: close");
			for (int i = 2; i < 5; i++) {
				out.write(request("/uploads/" + i).getBytes(StandardCharsets.ISO_8859_1));
				out.flush();
				assertThat(readResponse(in).status()).as("answer to request %d on the same connection", i)
					.isEqualTo(429);
			}
		}
	}

	@Test
	void routeRejectionOfABodyOfUnknownLengthClosesTheConnectionWithoutReadingIt() throws IOException {
		assertThat(this.http.get("/uploads/0").statusCode()).isNotEqualTo(429);
		try (Socket socket = connect()) {
			OutputStream out = socket.getOutputStream();
			DataInputStream in = new DataInputStream(socket.getInputStream());
			// a first chunk, and no last one: an answer waiting for the end would never come
			out.write(("POST /uploads/1 HTTP/1.1\r\nHost: 127.0.0.1:" + this.port
					+ "\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n")
				.getBytes(StandardCharsets.ISO_8859_1));
			out.flush();
			Response rejected = readResponse(in);
			assertThat(rejected.status()).isEqualTo(429);
			assertThat(rejected.headers()).contains("connection: close");
			assertThat(in.read()).as("end of the connection").isEqualTo(-1);
		}
	}

	@Test
	void routeRejectionOfARequestWaitingForContinueDoesNotAskForItsBody() throws IOException {
		assertThat(this.http.get("/uploads/0").statusCode()).isNotEqualTo(429);
		try (Socket socket = connect()) {
			OutputStream out = socket.getOutputStream();
			DataInputStream in = new DataInputStream(socket.getInputStream());
			out.write(("POST /uploads/1 HTTP/1.1\r\nHost: 127.0.0.1:" + this.port
					+ "\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\n")
				.getBytes(StandardCharsets.ISO_8859_1));
			out.flush();
			// the final answer first: no 100 Continue asks the client for a body no one reads
			assertThat(readResponse(in).status()).isEqualTo(429);
		}
	}

	private Socket connect() throws IOException {
		Socket socket = new Socket(InetAddress.getLoopbackAddress(), this.port);
		socket.setSoTimeout(10_000);
		return socket;
	}

	private String request(String path) {
		return "GET " + path + " HTTP/1.1\r\nHost: 127.0.0.1:" + this.port + "\r\n\r\n";
	}

	/** Reads one response with a Content-Length body. */
	private static Response readResponse(DataInputStream in) throws IOException {
		String statusLine = readLine(in);
		int length = 0;
		List<String> headers = new ArrayList<>();
		for (String line = readLine(in); !line.isEmpty(); line = readLine(in)) {
			String header = line.toLowerCase(Locale.ROOT);
			headers.add(header);
			if (header.startsWith("content-length:")) {
				length = Integer.parseInt(header.substring("content-length:".length()).trim());
			}
		}
		in.readFully(new byte[length]);
		return new Response(Integer.parseInt(statusLine.split(" ")[1]), headers);
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

	/** A response's status and its header lines, in lower case. */
	private record Response(int status, List<String> headers) {
	}

	@Test
	void plainValueAndFluxHandlersAreLimitedOncePerRequest() {
		assertThat(this.http.get("/plain/1").body()).isEqualTo("plain 1");
		assertThat(this.http.get("/plain/2").statusCode()).isEqualTo(200);
		assertThat(this.http.get("/plain/3").statusCode()).isEqualTo(429);
		assertThat(this.http.get("/stream").statusCode()).isEqualTo(200);
		assertThat(this.http.get("/stream").statusCode()).isEqualTo(200);
		assertThat(this.http.get("/stream").statusCode()).isEqualTo(429);
	}

	@Test
	void blockingCallOnAServerEventLoopThreadIsDetected() throws InterruptedException {
		AtomicReference<Throwable> failure = new AtomicReference<>();
		Thread eventLoop = new Thread(() -> {
			try {
				Thread.sleep(1);
			}
			catch (Throwable ex) {
				failure.set(ex);
			}
		}, "reactor-http-nio-probe");
		eventLoop.start();
		eventLoop.join(10_000);
		assertThat(failure.get()).isInstanceOf(BlockingOperationError.class);
	}

}
