package io.github.ratelimit.internal.core;

import java.time.Duration;

import org.junit.jupiter.api.Test;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.store.RateLimit;
import io.github.ratelimit.store.RateLimitDecision;
import io.github.ratelimit.store.contract.MutableClock;

import static io.github.ratelimit.internal.core.Requests.acquire;
import static org.assertj.core.api.Assertions.assertThat;

class TokenBucketTest {

	private static final long T0 = MutableClock.DEFAULT_START_MICROS;

	/** Four tokens, two per second: one token every 500ms. */
	private static final RateLimit LIMIT = new RateLimit("orders", Algorithm.TOKEN_BUCKET, 4, 2, Duration.ofSeconds(1));

	private static final long INTERVAL = 500_000;

	private final BucketState bucket = BucketState.create(LIMIT);

	@Test
	void createsATokenBucketForTheAlgorithm() {
		assertThat(this.bucket).isInstanceOf(TokenBucket.class);
		assertThat(this.bucket.algorithm()).isEqualTo(Algorithm.TOKEN_BUCKET);
		assertThat(LIMIT.emissionIntervalMicros()).isEqualTo(INTERVAL);
	}

	@Test
	void startsFull() {
		RateLimitDecision decision = this.bucket.check(LIMIT, T0, 4);
		assertThat(decision.allowed()).isTrue();
		assertThat(decision.remaining()).isZero();
		assertThat(decision.delayMicros()).isZero();
		assertThat(decision.retryAfterMicros()).isZero();
	}

	@Test
	void admitsABurstOfCapacityAndCountsDownRemaining() {
		for (long expected = 3; expected >= 0; expected--) {
			RateLimitDecision decision = acquire(this.bucket, LIMIT, T0, 1);
			assertThat(decision.allowed()).isTrue();
			assertThat(decision.remaining()).isEqualTo(expected);
			// the most recent token comes back one emission interval after it was taken
			assertThat(decision.resetMicros()).isEqualTo(INTERVAL);
		}
	}

	@Test
	void rejectsWhenBucketIsEmpty() {
		drain();
		RateLimitDecision decision = acquire(this.bucket, LIMIT, T0, 1);
		assertThat(decision.allowed()).isFalse();
		assertThat(decision.remaining()).isZero();
		assertThat(decision.retryAfterMicros()).isEqualTo(INTERVAL);
		assertThat(decision.resetMicros()).isEqualTo(INTERVAL);
		assertThat(decision.delayMicros()).isZero();
	}

	@Test
	void refillsOneTokenPerEmissionInterval() {
		drain();
		assertThat(acquire(this.bucket, LIMIT, T0 + INTERVAL - 1, 1).retryAfterMicros()).isEqualTo(1);
		RateLimitDecision refilled = acquire(this.bucket, LIMIT, T0 + INTERVAL, 1);
		assertThat(refilled.allowed()).isTrue();
		assertThat(refilled.remaining()).isZero();
		assertThat(acquire(this.bucket, LIMIT, T0 + INTERVAL, 1).allowed()).isFalse();
	}

	@Test
	void refillsLazilyByElapsedTimeTimesRate() {
		drain();
		// 1.5 intervals later: one whole token, half of the next
		RateLimitDecision decision = acquire(this.bucket, LIMIT, T0 + 3 * INTERVAL / 2, 1);
		assertThat(decision.allowed()).isTrue();
		assertThat(decision.remaining()).isZero();
		assertThat(decision.resetMicros()).isEqualTo(INTERVAL / 2);
		RateLimitDecision later = this.bucket.check(LIMIT, T0 + 3 * INTERVAL, 1);
		assertThat(later.allowed()).isTrue();
		assertThat(later.remaining()).isEqualTo(1);
	}

	@Test
	void neverRefillsAboveCapacity() {
		drain();
		RateLimitDecision decision = this.bucket.check(LIMIT, T0 + Duration.ofHours(1).toNanos() / 1_000, 1);
		assertThat(decision.remaining()).isEqualTo(3);
	}

	@Test
	void chargesTheCostOfARequest() {
		RateLimitDecision first = acquire(this.bucket, LIMIT, T0, 3);
		assertThat(first.allowed()).isTrue();
		assertThat(first.remaining()).isEqualTo(1);
		assertThat(first.resetMicros()).isEqualTo(INTERVAL);

		RateLimitDecision second = acquire(this.bucket, LIMIT, T0, 3);
		assertThat(second.allowed()).isFalse();
		assertThat(second.remaining()).isEqualTo(1);
		// two more tokens are needed, one emission interval each
		assertThat(second.retryAfterMicros()).isEqualTo(2 * INTERVAL);
		// yet one more unit is available after one interval
		assertThat(second.resetMicros()).isEqualTo(INTERVAL);

		assertThat(acquire(this.bucket, LIMIT, T0 + 2 * INTERVAL - 1, 3).allowed()).isFalse();
		assertThat(acquire(this.bucket, LIMIT, T0 + 2 * INTERVAL, 3).allowed()).isTrue();
	}

	@Test
	void admitsACheaperRequestThatStillFits() {
		acquire(this.bucket, LIMIT, T0, 3);
		assertThat(acquire(this.bucket, LIMIT, T0, 2).allowed()).isFalse();
		RateLimitDecision cheap = acquire(this.bucket, LIMIT, T0, 1);
		assertThat(cheap.allowed()).isTrue();
		assertThat(cheap.remaining()).isZero();
	}

	@Test
	void rejectedRequestChangesNothing() {
		drain();
		RateLimitDecision first = this.bucket.check(LIMIT, T0 + 100, 1);
		RateLimitDecision second = this.bucket.check(LIMIT, T0 + 100, 1);
		assertThat(second).isEqualTo(first);
		assertThat(acquire(this.bucket, LIMIT, T0 + INTERVAL, 1).allowed()).isTrue();
	}

	@Test
	void checkDoesNotConsume() {
		for (int i = 0; i < 10; i++) {
			assertThat(this.bucket.check(LIMIT, T0, 4).allowed()).isTrue();
		}
	}

	@Test
	void refundRestoresTheQuota() {
		acquire(this.bucket, LIMIT, T0, 3);
		this.bucket.refund(LIMIT, T0, 3);
		RateLimitDecision decision = this.bucket.check(LIMIT, T0, 4);
		assertThat(decision.allowed()).isTrue();
		assertThat(decision.remaining()).isZero();
	}

	@Test
	void refundOfAnUntouchedBucketKeepsItFull() {
		this.bucket.refund(LIMIT, T0, 3);
		assertThat(this.bucket.check(LIMIT, T0, 1).remaining()).isEqualTo(3);
		assertThat(this.bucket.check(LIMIT, T0, 4).allowed()).isTrue();
	}

	@Test
	void roundsTheEmissionIntervalUpToAWholeMicrosecond() {
		RateLimit thirds = new RateLimit("thirds", Algorithm.TOKEN_BUCKET, 3, 3, Duration.ofSeconds(1));
		BucketState state = BucketState.create(thirds);
		for (int i = 0; i < 3; i++) {
			acquire(state, thirds, T0, 1);
		}
		RateLimitDecision early = acquire(state, thirds, T0 + 333_333, 1);
		assertThat(early.allowed()).isFalse();
		assertThat(early.retryAfterMicros()).isEqualTo(1);
		assertThat(acquire(state, thirds, T0 + 333_334, 1).allowed()).isTrue();
	}

	private void drain() {
		assertThat(acquire(this.bucket, LIMIT, T0, 4).allowed()).isTrue();
	}

}
