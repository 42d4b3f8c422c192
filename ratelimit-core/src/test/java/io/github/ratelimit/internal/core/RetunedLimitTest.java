package io.github.ratelimit.internal.core;

import java.time.Duration;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.store.RateLimit;
import io.github.ratelimit.store.RateLimitDecision;
import io.github.ratelimit.store.contract.MutableClock;

import static io.github.ratelimit.internal.core.Requests.acquire;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * A bucket keeps its state when its limit is retuned (a policy changed in configuration,
 * or a persistent store across a deployment); a lower capacity may leave it used beyond
 * the new capacity, which must still be answered with a decision.
 */
class RetunedLimitTest {

	private static final long T0 = MutableClock.DEFAULT_START_MICROS;

	@ParameterizedTest
	@EnumSource(Algorithm.class)
	void bucketUsedBeyondALoweredCapacityRejectsUntilItHasDrained(Algorithm algorithm) {
		// the same refill rate, so that the buckets' emission interval stays 100ms
		RateLimit before = new RateLimit("orders", algorithm, 10, 10, Duration.ofSeconds(1));
		RateLimit after = new RateLimit("orders", algorithm, 5, 10, Duration.ofSeconds(1));
		BucketState state = BucketState.create(before);
		for (int i = 0; i < 8; i++) {
			assertThat(acquire(state, before, T0, 1).allowed()).isTrue();
		}
		RateLimitDecision rejected = state.check(after, T0 + 1, 1);
		assertThat(rejected.allowed()).isFalse();
		assertThat(rejected.remaining()).isZero();
		// one unit of a cost-1 request is also the first unit that comes back
		assertThat(rejected.resetMicros()).isEqualTo(rejected.retryAfterMicros());
		long retry = T0 + 1 + rejected.retryAfterMicros();
		assertThat(state.check(after, retry - 1, 1).allowed()).isFalse();
		RateLimitDecision admitted = state.check(after, retry, 1);
		assertThat(admitted.allowed()).isTrue();
		assertThat(admitted.remaining()).isLessThan(after.capacity());
	}

}
