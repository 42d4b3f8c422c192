package io.github.ratelimit.internal.webflux;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import org.junit.jupiter.api.Test;

import org.springframework.mock.http.server.reactive.MockServerHttpRequest;
import org.springframework.mock.web.server.MockServerWebExchange;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Where a request goes on after the limiter waited for a stage that completes on another
 * thread, when there is no event loop to go back to.
 */
class ServerEventLoopsTests {

	private final MockServerWebExchange exchange = MockServerWebExchange.from(MockServerHttpRequest.get("/a"));

	@Test
	void aStageCompletedLaterNeverGoesOnOnTheThreadThatCompletedIt() throws Exception {
		CompletableFuture<String> reply = new CompletableFuture<>();
		AtomicReference<Thread> continuedOn = new AtomicReference<>();
		CompletionStage<String> stage = ServerEventLoops.completeOn(this.exchange, reply)
			.whenComplete((value, failure) -> continuedOn.set(Thread.currentThread()));
		// a store's I/O thread completes the reply, as Lettuce does while it holds its locks
		Thread io = new Thread(() -> reply.complete("decided"), "store-io");
		io.start();
		io.join(10_000);
		assertThat(stage.toCompletableFuture().get(10, TimeUnit.SECONDS)).isEqualTo("decided");
		assertThat(continuedOn.get()).isNotNull().isNotSameAs(io);
		assertThat(continuedOn.get().getName()).startsWith("boundedElastic-");
	}

	@Test
	void aStageAlreadyCompletedGoesOnAtOnce() {
		CompletableFuture<String> reply = CompletableFuture.completedFuture("decided");
		assertThat(ServerEventLoops.completeOn(this.exchange, reply)).isSameAs(reply);
	}

}
