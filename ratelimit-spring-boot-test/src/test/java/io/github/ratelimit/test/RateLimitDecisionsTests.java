package io.github.ratelimit.test;

import java.time.Duration;
import java.util.List;

import org.junit.jupiter.api.Test;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.FailMode;
import io.github.ratelimit.internal.core.RateLimiter;
import io.github.ratelimit.internal.memory.InMemoryRateLimitStore;
import io.github.ratelimit.store.Acquisition;
import io.github.ratelimit.store.RateLimit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

class RateLimitDecisionsTests {

	private final RateLimit orders = RateLimit.of("orders", Algorithm.FIXED_WINDOW, 1, Duration.ofMinutes(1));

	private final RateLimit search = new RateLimit("search", Algorithm.TOKEN_BUCKET, 1, 0, Duration.ofMinutes(1),
			FailMode.OPEN, true);

	private final RateLimitDecisions decisions = new RateLimitDecisions();

	private final RateLimiter limiter = new RateLimiter(new InMemoryRateLimitStore(new TestRateLimitClock(), 100),
			this.decisions);

	@Test
	void recordsEveryDecisionOfARequestWithItsIdentity() {
		this.limiter.acquire(List.of(new Acquisition(this.orders, "user:alice", 1)));
		this.limiter.acquire(List.of(new Acquisition(this.orders, "user:alice", 1)));
		this.limiter.acquire(List.of(new Acquisition(this.search, "user:bob", 1), new Acquisition(this.orders, "user:bob", 1)));
		assertThat(this.decisions.all()).extracting(RecordedDecision::toString)
			.containsExactly("'orders' allowed user:alice (cost 1, remaining 0)",
					"'orders' rejected user:alice (cost 1, remaining 0)",
					"'search' allowed user:bob (cost 1, remaining 0, shadow)",
					"'orders' allowed user:bob (cost 1, remaining 0)");
		assertThat(this.decisions.rejected()).singleElement().satisfies((rejection) -> {
			assertThat(rejection.retryAfter()).isEqualTo(Duration.ofMinutes(1));
			assertThat(rejection.store()).isEqualTo("memory");
		});
		assertThat(this.decisions.of("search")).singleElement()
			.satisfies((decision) -> assertThat(decision.shadow()).isTrue());
	}

	@Test
	void assertsWhichLimitRejectedWhom() {
		this.limiter.acquire(List.of(new Acquisition(this.orders, "user:alice", 1)));
		this.limiter.acquire(List.of(new Acquisition(this.orders, "user:alice", 1)));
		this.limiter.acquire(List.of(new Acquisition(this.orders, "user:bob", 1)));
		assertThat(this.decisions).hasRejected("orders", "user:alice")
			.hasAllowed("orders", "user:alice")
			.hasNotRejected("orders", "user:bob");
		assertThat(this.decisions).decisionsOf("orders").hasSize(3);
	}

	@Test
	void failureMessagesListWhatWasRecorded() {
		this.limiter.acquire(List.of(new Acquisition(this.orders, "user:alice", 1)));
		assertThatExceptionOfType(AssertionError.class)
			.isThrownBy(() -> assertThat(this.decisions).hasRejected("orders", "user:alice"))
			.withMessageContaining("Expected limit 'orders' to have rejected user:alice, but recorded:")
			.withMessageContaining("'orders' allowed user:alice (cost 1, remaining 0)");
		this.limiter.acquire(List.of(new Acquisition(this.orders, "user:alice", 1)));
		assertThatExceptionOfType(AssertionError.class)
			.isThrownBy(() -> assertThat(this.decisions).hasNoRejections())
			.withMessageContaining("'orders' rejected user:alice");
		assertThatExceptionOfType(AssertionError.class)
			.isThrownBy(() -> assertThat(this.decisions).hasNotRejected("orders", "user:alice"))
			.withMessageContaining("Expected limit 'orders' not to have rejected user:alice");
	}

	@Test
	void clearForgetsEverything() {
		this.limiter.acquire(List.of(new Acquisition(this.orders, "user:alice", 1)));
		this.decisions.clear();
		assertThat(this.decisions.all()).isEmpty();
		assertThatExceptionOfType(AssertionError.class)
			.isThrownBy(() -> assertThat(this.decisions).hasAllowed("orders", "user:alice"))
			.withMessageContaining("but recorded: nothing");
	}

}
