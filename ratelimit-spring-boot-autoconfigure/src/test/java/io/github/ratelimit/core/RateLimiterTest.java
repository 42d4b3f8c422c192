package io.github.ratelimit.core;

import java.time.Duration;
import java.util.List;

import org.junit.jupiter.api.Test;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.memory.InMemoryRateLimitStore;

import static org.assertj.core.api.Assertions.assertThat;

class RateLimiterTest {

	private final MutableClock clock = new MutableClock(MutableClock.DEFAULT_START_MICROS);

	private final RateLimiter limiter = new RateLimiter(new InMemoryRateLimitStore(this.clock, 100));

	private final RateLimit shared = RateLimit.of("shared", Algorithm.FIXED_WINDOW, 10, Duration.ofMinutes(1));

	@Test
	void placesSharingABucketPayTheSumOfTheirCostsAtomically() {
		RateLimitResult result = this.limiter
			.acquire(List.of(new Acquisition(this.shared, "u", 3), new Acquisition(this.shared, "u", 4)));
		assertThat(result.allowed()).isTrue();
		assertThat(result.decisions()).extracting(RateLimitDecision::remaining).containsExactly(3L, 3L);
	}

	@Test
	void costsAddingUpAboveTheCapacityAskForTheWholeBucketInsteadOfFailing() {
		List<Acquisition> request = List.of(new Acquisition(this.shared, "u", 6), new Acquisition(this.shared, "u", 6));
		assertThat(this.limiter.acquire(request).allowed()).isTrue();
		assertThat(this.limiter.acquire(request).allowed()).isFalse();
	}

	@Test
	void refundGivesBackTheMergedCost() {
		List<Acquisition> request = List.of(new Acquisition(this.shared, "u", 3), new Acquisition(this.shared, "u", 4));
		RateLimitResult result = this.limiter.acquire(request);
		this.limiter.refund(request, result);
		assertThat(this.limiter.acquire(List.of(new Acquisition(this.shared, "u", 10))).allowed()).isTrue();
	}

}
