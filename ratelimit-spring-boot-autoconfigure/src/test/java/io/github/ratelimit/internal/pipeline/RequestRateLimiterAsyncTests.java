package io.github.ratelimit.internal.pipeline;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.FailMode;
import io.github.ratelimit.internal.core.RateLimiter;
import io.github.ratelimit.internal.memory.InMemoryRateLimitStore;
import io.github.ratelimit.store.Acquisition;
import io.github.ratelimit.store.RateLimit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The asynchronous decision of a request stage never waits for the store: a store's
 * reply may complete before the continuation is attached, which then runs on the thread
 * that asked (an event loop), so the refunds of earlier stages must not be blocking calls.
 */
class RequestRateLimiterAsyncTests {

	private static final RateLimit ROUTE = RateLimit.of("route", Algorithm.FIXED_WINDOW, 10, Duration.ofMinutes(1));

	private static final RateLimit HANDLER = RateLimit.of("handler", Algorithm.FIXED_WINDOW, 1, Duration.ofMinutes(1));

	private final AsyncOnlyStore store = new AsyncOnlyStore(new InMemoryRateLimitStore());

	private final RequestRateLimiter limiter = RequestRateLimiter
		.builder(new RateLimiter(this.store), new RateLimitResponses(HeaderStyle.IETF))
		.build();

	@Test
	void aRejectedStageGivesEarlierStagesBackWithoutBlocking() {
		RequestLimits first = new RequestLimits();
		admit(List.of(new Acquisition(ROUTE, "client", 1), new Acquisition(HANDLER, "client", 1)), first);
		RequestLimits state = new RequestLimits();
		admit(List.of(new Acquisition(ROUTE, "client", 1)), state);

		Verdict verdict = decide(List.of(new Acquisition(HANDLER, "client", 1)), state);

		assertThat(verdict.proceeds()).isFalse();
		assertThat(verdict.problem().status()).isEqualTo(429);
		assertThat(this.store.asyncRefunds).hasValue(1);
		// the route's unit is back: only the first request's is used
		assertThat(this.store.inspect(ROUTE, "client").remaining()).isEqualTo(9);
	}

	@Test
	void anUnavailableStoreGivesEarlierStagesBackWithoutBlocking() {
		RateLimit closed = new RateLimit("closed", Algorithm.FIXED_WINDOW, 1, 0, Duration.ofMinutes(1), FailMode.CLOSED);
		RequestLimits state = new RequestLimits();
		admit(List.of(new Acquisition(ROUTE, "client", 1)), state);
		this.store.unavailable = closed;

		Verdict verdict = decide(List.of(new Acquisition(closed, "client", 1)), state);

		assertThat(verdict.problem().status()).isEqualTo(503);
		assertThat(this.store.asyncRefunds).hasValue(1);
		assertThat(this.store.inspect(ROUTE, "client").remaining()).isEqualTo(10);
	}

	@Test
	void whatADecisionGrantsAfterTheClientWentAwayIsGivenBack() {
		RateLimit exports = RateLimit.of("exports", Algorithm.CONCURRENCY, 1, Duration.ofMinutes(1));
		RequestLimits state = new RequestLimits();
		admit(List.of(new Acquisition(ROUTE, "client", 1)), state);
		this.store.gate = new CompletableFuture<>();
		CompletableFuture<Verdict> pending = this.limiter
			.decideAsync(List.of(new Acquisition(exports, "client", 1)), state, 0)
			.toCompletableFuture();
		// the exchange is cancelled while the store decides
		this.limiter.abandon(state);
		assertThat(this.store.asyncRefunds).as("the route stage's unit").hasValue(1);
		this.store.gate.complete(null);
		assertThat(pending.join().proceeds()).isFalse();
		assertThat(this.store.asyncRefunds).as("and the permit granted afterwards").hasValue(2);
		assertThat(this.store.inspect(exports, "client").remaining()).isEqualTo(1);
		assertThat(this.store.inspect(ROUTE, "client").remaining()).isEqualTo(10);
	}

	@Test
	void whatADecisionGrantsAfterTheClientWentAwayIsGivenBackButNotWhatEarlierStagesBeganWith() {
		RateLimit exports = RateLimit.of("exports", Algorithm.CONCURRENCY, 1, Duration.ofMinutes(1));
		RequestLimits state = new RequestLimits();
		admit(List.of(new Acquisition(ROUTE, "client", 1)), state);
		// the request went on: Spring Security ran, then the handler stage asks the store
		assertThat(state.begin()).isTrue();
		this.store.gate = new CompletableFuture<>();
		CompletableFuture<Verdict> pending = this.limiter
			.decideAsync(List.of(new Acquisition(exports, "client", 1)), state, 0)
			.toCompletableFuture();

		this.limiter.abandon(state);
		this.store.gate.complete(null);

		assertThat(pending.join().proceeds()).isFalse();
		assertThat(this.store.asyncRefunds).as("only the permit granted afterwards").hasValue(1);
		assertThat(this.store.inspect(exports, "client").remaining()).isEqualTo(1);
		assertThat(this.store.inspect(ROUTE, "client").remaining()).isEqualTo(9);
	}

	@Test
	void aWindowRejectionDecidedOnTheCallingThreadIsTriedAgainWithinTheWait() throws InterruptedException {
		RateLimit window = RateLimit.of("window", Algorithm.FIXED_WINDOW, 1, Duration.ofSeconds(1));
		// windows are aligned to the epoch: start early in one, so that it cannot turn between
		// the two calls below however slow the machine is
		long intoWindow = System.currentTimeMillis() % 1_000;
		if (intoWindow > 200) {
			Thread.sleep(1_000 - intoWindow + 20);
		}
		admit(List.of(new Acquisition(window, "client", 1)), new RequestLimits());

		CompletableFuture<Verdict> waiting = this.limiter
			.decideAsync(List.of(new Acquisition(window, "client", 1)), new RequestLimits(), 2_000_000)
			.toCompletableFuture();

		// rejected now, admitted once the window has turned, at most a second later
		assertThat(waiting).isNotDone();
		assertThat(waiting.orTimeout(5, TimeUnit.SECONDS).join().proceeds()).isTrue();
	}

	private void admit(List<Acquisition> acquisitions, RequestLimits state) {
		assertThat(decide(acquisitions, state).proceeds()).isTrue();
	}

	private Verdict decide(List<Acquisition> acquisitions, RequestLimits state) {
		return this.limiter.decideAsync(acquisitions, state, 0).toCompletableFuture().join();
	}

}
