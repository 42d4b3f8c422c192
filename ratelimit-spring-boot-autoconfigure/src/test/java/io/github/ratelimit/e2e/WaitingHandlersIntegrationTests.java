package io.github.ratelimit.e2e;

import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

import io.github.ratelimit.KeySource;
import io.github.ratelimit.RateLimited;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Controllers and {@code maxWait} over real HTTP: a handler waits only when its own
 * annotation says so, and one returning a {@link CompletableFuture} waits without holding
 * the servlet thread.
 */
@SpringBootTest(classes = { E2eApplication.class, WaitingHandlersIntegrationTests.WaitingController.class },
		webEnvironment = WebEnvironment.RANDOM_PORT, properties = "ratelimit.policies.batch.max-wait=5s")
class WaitingHandlersIntegrationTests {

	@LocalServerPort
	int port;

	HttpTestClient http;

	@BeforeEach
	void freshBuckets() {
		E2eApplication.advance(Duration.ofDays(3650));
		this.http = new HttpTestClient(this.port);
	}

	@Test
	void asyncHandlerWithMaxWaitWaitsForItsSlotInsteadOfAnswering429() {
		// the test clock stands still: the second request waits for the slot it reserved
		assertThat(this.http.get("/waiting/async").body()).isEqualTo("sent 1");
		HttpResponse<String> waited = this.http.get("/waiting/async");
		assertThat(waited.statusCode()).isEqualTo(200);
		assertThat(waited.body()).isEqualTo("sent 2");
	}

	@Test
	void asyncHandlerWhoseSlotIsBeyondMaxWaitGets429AtOnce() {
		assertThat(this.http.get("/waiting/hourly").statusCode()).isEqualTo(200);
		HttpResponse<String> rejected = this.http.get("/waiting/hourly");
		assertThat(rejected.statusCode()).isEqualTo(429);
		assertThat(rejected.headers().firstValue("Retry-After")).hasValue("3600");
	}

	@Test
	void handlerDoesNotWaitWhenOnlyItsPolicySetsMaxWait() {
		assertThat(this.http.get("/waiting/policy").statusCode()).isEqualTo(200);
		assertThat(this.http.get("/waiting/policy").statusCode()).isEqualTo(429);
	}

	@RestController
	static class WaitingController {

		private int sent;

		/** One token every 50ms. */
		@RateLimited(name = "async-sms", capacity = 1, refillTokens = 20, key = KeySource.GLOBAL, maxWait = "1s")
		@GetMapping("/waiting/async")
		CompletableFuture<String> async() {
			return CompletableFuture.completedFuture("sent " + next());
		}

		@RateLimited(name = "hourly", capacity = 1, period = "1h", key = KeySource.GLOBAL, maxWait = "1s")
		@GetMapping("/waiting/hourly")
		CompletableFuture<String> hourly() {
			return CompletableFuture.completedFuture("ok");
		}

		@RateLimited(name = "batch", capacity = 1, period = "1h", key = KeySource.GLOBAL)
		@GetMapping("/waiting/policy")
		String policy() {
			return "ok";
		}

		private synchronized int next() {
			return ++this.sent;
		}

	}

}
