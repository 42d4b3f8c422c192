package io.github.ratelimit.internal.core;

import java.time.Duration;

import org.junit.jupiter.api.Test;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.store.RateLimit;
import io.github.ratelimit.store.RateLimitDecision;
import io.github.ratelimit.store.contract.MutableClock;

import static io.github.ratelimit.internal.core.Requests.acquire;
import static org.assertj.core.api.Assertions.assertThat;

class LeakyBucketTest {

	private static final long T0 = MutableClock.DEFAULT_START_MICROS;

	/** A queue of four drained at two per second: one place every 500ms, C/r = 2s. */
	private static final RateLimit LIMIT = new RateLimit("uploads", Algorithm.LEAKY_BUCKET, 4, 2,
			Duration.ofSeconds(1));

	private static final long INTERVAL = 500_000;

	private final BucketState bucket = BucketState.create(LIMIT);

	@Test
	void createsALeakyBucketForTheAlgorithm() {
		assertThat(this.bucket).isInstanceOf(LeakyBucket.class);
		assertThat(this.bucket.algorithm()).isEqualTo(Algorithm.LEAKY_BUCKET);
	}

	@Test
	void delaysAdmittedRequestsUntilTheirDrainSlot() {
		for (int slot = 0; slot < 4; slot++) {
			RateLimitDecision decision = acquire(this.bucket, LIMIT, T0, 1);
			assertThat(decision.allowed()).isTrue();
			assertThat(decision.delayMicros()).isEqualTo(slot * INTERVAL);
			assertThat(decision.remaining()).isEqualTo(3 - slot);
			assertThat(decision.resetMicros()).isEqualTo(INTERVAL);
			assertThat(decision.retryAfterMicros()).isZero();
		}
	}

	@Test
	void rejectsARequestThatWouldNotLeaveTheQueueWithinCapacityOverRate() {
		for (int i = 0; i < 4; i++) {
			acquire(this.bucket, LIMIT, T0, 1);
		}
		// a fifth request would only have drained after 5 intervals, beyond C/r = 4 intervals
		RateLimitDecision decision = acquire(this.bucket, LIMIT, T0, 1);
		assertThat(decision.allowed()).isFalse();
		assertThat(decision.remaining()).isZero();
		assertThat(decision.delayMicros()).isZero();
		assertThat(decision.retryAfterMicros()).isEqualTo(INTERVAL);
		assertThat(decision.resetMicros()).isEqualTo(INTERVAL);
	}

	@Test
	void neverDelaysARequestByCapacityOverRateOrMore() {
		long capacityOverRate = 4 * INTERVAL;
		long now = T0;
		for (int i = 0; i < 40; i++) {
			RateLimitDecision decision = acquire(this.bucket, LIMIT, now, 1 + (i % 3));
			if (decision.allowed()) {
				assertThat(decision.delayMicros()).isLessThan(capacityOverRate);
			}
			now += INTERVAL / 3;
		}
	}

	@Test
	void drainsOnePlacePerEmissionInterval() {
		for (int i = 0; i < 4; i++) {
			acquire(this.bucket, LIMIT, T0, 1);
		}
		assertThat(acquire(this.bucket, LIMIT, T0 + INTERVAL - 1, 1).retryAfterMicros()).isEqualTo(1);
		RateLimitDecision decision = acquire(this.bucket, LIMIT, T0 + INTERVAL, 1);
		assertThat(decision.allowed()).isTrue();
		// the queue ahead of it drains at T0 + 4 intervals
		assertThat(decision.delayMicros()).isEqualTo(3 * INTERVAL);
		assertThat(decision.remaining()).isZero();
	}

	@Test
	void admitsWithoutDelayOnceTheQueueHasDrained() {
		for (int i = 0; i < 4; i++) {
			acquire(this.bucket, LIMIT, T0, 1);
		}
		RateLimitDecision decision = acquire(this.bucket, LIMIT, T0 + 4 * INTERVAL, 1);
		assertThat(decision.allowed()).isTrue();
		assertThat(decision.delayMicros()).isZero();
		assertThat(decision.remaining()).isEqualTo(3);
	}

	@Test
	void takesOnePlacePerUnitOfCost() {
		RateLimitDecision first = acquire(this.bucket, LIMIT, T0, 2);
		assertThat(first.delayMicros()).isZero();
		assertThat(first.remaining()).isEqualTo(2);
		RateLimitDecision second = acquire(this.bucket, LIMIT, T0, 2);
		assertThat(second.allowed()).isTrue();
		assertThat(second.delayMicros()).isEqualTo(2 * INTERVAL);
		assertThat(second.remaining()).isZero();
		RateLimitDecision third = acquire(this.bucket, LIMIT, T0 + INTERVAL, 2);
		assertThat(third.allowed()).isFalse();
		assertThat(third.remaining()).isEqualTo(1);
		assertThat(third.retryAfterMicros()).isEqualTo(INTERVAL);
		assertThat(third.resetMicros()).isEqualTo(INTERVAL);
	}

	@Test
	void refundGivesThePlacesBack() {
		acquire(this.bucket, LIMIT, T0, 3);
		this.bucket.refund(LIMIT, T0, 3);
		RateLimitDecision decision = acquire(this.bucket, LIMIT, T0, 1);
		assertThat(decision.delayMicros()).isZero();
		assertThat(decision.remaining()).isEqualTo(3);
	}

}
