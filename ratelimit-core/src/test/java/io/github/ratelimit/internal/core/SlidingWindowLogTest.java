package io.github.ratelimit.internal.core;

import java.time.Duration;

import org.junit.jupiter.api.Test;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.store.RateLimit;
import io.github.ratelimit.store.RateLimitDecision;
import io.github.ratelimit.store.contract.MutableClock;

import static io.github.ratelimit.internal.core.Requests.acquire;
import static org.assertj.core.api.Assertions.assertThat;

class SlidingWindowLogTest {

	private static final long T0 = MutableClock.DEFAULT_START_MICROS;

	private static final long PERIOD = 1_000_000;

	private static final RateLimit LIMIT = RateLimit.of("login", Algorithm.SLIDING_WINDOW_LOG, 3,
			Duration.ofSeconds(1));

	private final BucketState log = BucketState.create(LIMIT);

	@Test
	void createsASlidingWindowLogForTheAlgorithm() {
		assertThat(this.log).isInstanceOf(SlidingWindowLog.class);
		assertThat(this.log.algorithm()).isEqualTo(Algorithm.SLIDING_WINDOW_LOG);
	}

	@Test
	void admitsCapacityInAPeriodAndResetsWhenTheOldestExpires() {
		RateLimitDecision first = acquire(this.log, LIMIT, T0, 1);
		assertThat(first.remaining()).isEqualTo(2);
		assertThat(first.resetMicros()).isEqualTo(PERIOD);
		RateLimitDecision second = acquire(this.log, LIMIT, T0 + 100, 1);
		assertThat(second.remaining()).isEqualTo(1);
		assertThat(second.resetMicros()).isEqualTo(PERIOD - 100);
		RateLimitDecision third = acquire(this.log, LIMIT, T0 + 200, 1);
		assertThat(third.remaining()).isZero();
		assertThat(third.resetMicros()).isEqualTo(PERIOD - 200);
	}

	@Test
	void rejectsUntilTheOldestRequestIsAPeriodOld() {
		fill();
		RateLimitDecision rejected = acquire(this.log, LIMIT, T0 + 300, 1);
		assertThat(rejected.allowed()).isFalse();
		assertThat(rejected.remaining()).isZero();
		assertThat(rejected.retryAfterMicros()).isEqualTo(PERIOD - 300);
		assertThat(rejected.resetMicros()).isEqualTo(PERIOD - 300);
		assertThat(acquire(this.log, LIMIT, T0 + PERIOD - 1, 1).retryAfterMicros()).isEqualTo(1);
		RateLimitDecision admitted = acquire(this.log, LIMIT, T0 + PERIOD, 1);
		assertThat(admitted.allowed()).isTrue();
		assertThat(admitted.remaining()).isZero();
		// the entry at T0 + 100 is next to go
		assertThat(admitted.resetMicros()).isEqualTo(100);
	}

	@Test
	void slidesWithoutWindowBoundaries() {
		fill();
		// one period after the first request only that one has left the log
		assertThat(acquire(this.log, LIMIT, T0 + PERIOD, 1).allowed()).isTrue();
		assertThat(acquire(this.log, LIMIT, T0 + PERIOD + 99, 1).allowed()).isFalse();
		assertThat(acquire(this.log, LIMIT, T0 + PERIOD + 100, 1).allowed()).isTrue();
	}

	@Test
	void waitsForEnoughEntriesToExpireForACostlyRequest() {
		fill();
		RateLimitDecision rejected = acquire(this.log, LIMIT, T0 + 300, 2);
		assertThat(rejected.allowed()).isFalse();
		// two entries must leave: the second one expires at T0 + 100 + PERIOD
		assertThat(rejected.retryAfterMicros()).isEqualTo(PERIOD - 200);
		// but one unit is back when the first one does
		assertThat(rejected.resetMicros()).isEqualTo(PERIOD - 300);
		assertThat(acquire(this.log, LIMIT, T0 + PERIOD + 99, 2).allowed()).isFalse();
		assertThat(acquire(this.log, LIMIT, T0 + PERIOD + 100, 2).allowed()).isTrue();
	}

	@Test
	void logsTheCostOfAnEntry() {
		assertThat(acquire(this.log, LIMIT, T0, 2).remaining()).isEqualTo(1);
		RateLimitDecision rejected = acquire(this.log, LIMIT, T0 + 10, 2);
		assertThat(rejected.allowed()).isFalse();
		assertThat(rejected.remaining()).isEqualTo(1);
		assertThat(rejected.retryAfterMicros()).isEqualTo(PERIOD - 10);
	}

	@Test
	void rejectedRequestsAreNotLogged() {
		fill();
		for (int i = 1; i <= 5; i++) {
			assertThat(acquire(this.log, LIMIT, T0 + 300 + i, 1).allowed()).isFalse();
		}
		// had the rejections been logged, these would still be blocked
		assertThat(acquire(this.log, LIMIT, T0 + PERIOD + 200, 3).allowed()).isTrue();
	}

	@Test
	void refundRemovesTheEntry() {
		fill();
		this.log.refund(LIMIT, T0 + 100, 1);
		RateLimitDecision decision = acquire(this.log, LIMIT, T0 + 300, 1);
		assertThat(decision.allowed()).isTrue();
		assertThat(decision.remaining()).isZero();
		assertThat(acquire(this.log, LIMIT, T0 + 301, 1).allowed()).isFalse();
	}

	@Test
	void refundOfAnUnknownEntryChangesNothing() {
		fill();
		this.log.refund(LIMIT, T0 + 150, 1);
		this.log.refund(LIMIT, T0 + 100, 2);
		assertThat(acquire(this.log, LIMIT, T0 + 300, 1).allowed()).isFalse();
	}

	private void fill() {
		acquire(this.log, LIMIT, T0, 1);
		acquire(this.log, LIMIT, T0 + 100, 1);
		assertThat(acquire(this.log, LIMIT, T0 + 200, 1).remaining()).isZero();
	}

}
