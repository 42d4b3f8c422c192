package io.github.ratelimit.e2e;

import java.time.Duration;
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

	@BeforeAll
	static void detectBlockingCalls() {
		BlockHound.builder()
			.with(new ReactorBlockHoundIntegration())
			.nonBlockingThreadPredicate((current) -> current.or((thread) -> thread.getName().startsWith("reactor-http-")))
			// Spring's caches of annotation metadata lock while they grow, on a handler's first calls
			.allowBlockingCallsInside("org.springframework.util.ConcurrentReferenceHashMap$Segment", "doTask")
			// Lettuce's asynchronous send waits briefly while a reconnect holds its endpoint,
			// as its own reactive API does on event loops
			.allowBlockingCallsInside("io.lettuce.core.protocol.SharedLock", "incrementWriters")
			// an event loop that is shutting down waits for its last tasks: Netty's, not ours
			.allowBlockingCallsInside("io.netty.util.concurrent.SingleThreadEventExecutor", "confirmShutdown")
			// the console appender locks its stream while another thread writes a line. The error
			// BlockHound throws there loses the line and escapes from whatever logged it, such as
			// Reactor Netty's handlers, leaving the connection without an answer and nothing in
			// the log: a client then times out. Logging is the application's choice, not ours.
			.allowBlockingCallsInside("ch.qos.logback.core.OutputStreamAppender", "writeBytes")
			.install();
	}

	@Override
	void advance(Duration duration) {
		ReactiveE2eApplication.advance(duration);
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
