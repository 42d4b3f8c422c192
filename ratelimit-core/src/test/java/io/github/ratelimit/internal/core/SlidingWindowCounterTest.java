package io.github.ratelimit.internal.core;

import java.time.Duration;

import org.junit.jupiter.api.Test;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.store.RateLimit;
import io.github.ratelimit.store.RateLimitDecision;
import io.github.ratelimit.store.contract.MutableClock;

import static io.github.ratelimit.internal.core.Requests.acquire;
import static org.assertj.core.api.Assertions.assertThat;

class SlidingWindowCounterTest {

	/** Start of a window: the start time is aligned to whole seconds. */
	private static final long T0 = MutableClock.DEFAULT_START_MICROS;

	private static final long PERIOD = 1_000_000;

	private static final RateLimit LIMIT = RateLimit.of("feed", Algorithm.SLIDING_WINDOW_COUNTER, 10,
			Duration.ofSeconds(1));

	private final BucketState counter = BucketState.create(LIMIT);

	@Test
	void createsASlidingWindowCounterForTheAlgorithm() {
		assertThat(this.counter).isInstanceOf(SlidingWindowCounter.class);
		assertThat(this.counter.algorithm()).isEqualTo(Algorithm.SLIDING_WINDOW_COUNTER);
	}

	@Test
	void admitsCapacityInTheFirstWindow() {
		for (long expected = 9; expected >= 0; expected--) {
			RateLimitDecision decision = acquire(this.counter, LIMIT, T0, 1);
			assertThat(decision.allowed()).isTrue();
			assertThat(decision.remaining()).isEqualTo(expected);
		}
		RateLimitDecision rejected = acquire(this.counter, LIMIT, T0 + PERIOD / 2, 1);
		assertThat(rejected.allowed()).isFalse();
		assertThat(rejected.remaining()).isZero();
		// at the next window start the ten requests still weigh fully; one tenth of a
		// period later one of them has decayed
		assertThat(rejected.retryAfterMicros()).isEqualTo(PERIOD / 2 + PERIOD / 10);
		assertThat(rejected.resetMicros()).isEqualTo(PERIOD / 2 + PERIOD / 10);
	}

	@Test
	void resetsWhenTheRequestsHaveDecayedOutOfThePreviousWindow() {
		RateLimitDecision only = acquire(this.counter, LIMIT, T0 + 250_000, 1);
		assertThat(only.remaining()).isEqualTo(9);
		// the request weighs fully until the next window starts, then decays over it
		assertThat(only.resetMicros()).isEqualTo(750_000 + PERIOD);
	}

	@Test
	void weighsThePreviousWindowByTheShareOfItStillInThePeriod() {
		for (int i = 0; i < 10; i++) {
			acquire(this.counter, LIMIT, T0, 1);
		}
		// half way through the next window the previous ten weigh five
		long halfWay = T0 + PERIOD + PERIOD / 2;
		RateLimitDecision first = acquire(this.counter, LIMIT, halfWay, 1);
		assertThat(first.allowed()).isTrue();
		assertThat(first.remaining()).isEqualTo(4);
		// one more previous request decays every tenth of a period
		assertThat(first.resetMicros()).isEqualTo(PERIOD / 10);
		for (long expected = 3; expected >= 0; expected--) {
			assertThat(acquire(this.counter, LIMIT, halfWay, 1).remaining()).isEqualTo(expected);
		}
		RateLimitDecision rejected = acquire(this.counter, LIMIT, halfWay, 1);
		assertThat(rejected.allowed()).isFalse();
		assertThat(rejected.remaining()).isZero();
		assertThat(rejected.retryAfterMicros()).isEqualTo(PERIOD / 10);
		assertThat(acquire(this.counter, LIMIT, halfWay + PERIOD / 10 - 1, 1).allowed()).isFalse();
		assertThat(acquire(this.counter, LIMIT, halfWay + PERIOD / 10, 1).allowed()).isTrue();
	}

	@Test
	void waitsForTheNextWindowWhenTheCurrentOneCannotHoldTheRequest() {
		for (int i = 0; i < 8; i++) {
			acquire(this.counter, LIMIT, T0, 1);
		}
		RateLimitDecision rejected = acquire(this.counter, LIMIT, T0 + PERIOD / 2, 3);
		assertThat(rejected.allowed()).isFalse();
		assertThat(rejected.remaining()).isEqualTo(2);
		// next window: 8 previous weigh 8·(1 − e/P), admitted once that is at most 7,
		// at e = P/8
		assertThat(rejected.retryAfterMicros()).isEqualTo(PERIOD / 2 + PERIOD / 8);
		// two units are free already; the third comes back at the same moment
		assertThat(rejected.resetMicros()).isEqualTo(PERIOD / 2 + PERIOD / 8);
		assertThat(acquire(this.counter, LIMIT, T0 + PERIOD + PERIOD / 8 - 1, 3).allowed()).isFalse();
		RateLimitDecision admitted = acquire(this.counter, LIMIT, T0 + PERIOD + PERIOD / 8, 3);
		assertThat(admitted.allowed()).isTrue();
		assertThat(admitted.remaining()).isZero();
	}

	@Test
	void forgetsWindowsOlderThanThePreviousOne() {
		for (int i = 0; i < 10; i++) {
			acquire(this.counter, LIMIT, T0, 1);
		}
		RateLimitDecision decision = acquire(this.counter, LIMIT, T0 + 2 * PERIOD, 1);
		assertThat(decision.allowed()).isTrue();
		assertThat(decision.remaining()).isEqualTo(9);
	}

	@Test
	void chargesTheCostOfARequest() {
		RateLimitDecision decision = acquire(this.counter, LIMIT, T0, 7);
		assertThat(decision.remaining()).isEqualTo(3);
		RateLimitDecision rejected = acquire(this.counter, LIMIT, T0 + 1, 4);
		assertThat(rejected.allowed()).isFalse();
		assertThat(rejected.remaining()).isEqualTo(3);
	}

	@Test
	void refundRestoresTheCurrentWindow() {
		acquire(this.counter, LIMIT, T0, 10);
		this.counter.refund(LIMIT, T0, 4);
		RateLimitDecision decision = acquire(this.counter, LIMIT, T0 + 1, 4);
		assertThat(decision.allowed()).isTrue();
		assertThat(decision.remaining()).isZero();
	}

	@Test
	void refundRestoresThePreviousWindowOnceTheNextHasStarted() {
		acquire(this.counter, LIMIT, T0, 10);
		acquire(this.counter, LIMIT, T0 + PERIOD + PERIOD / 2, 5);
		this.counter.refund(LIMIT, T0, 10);
		RateLimitDecision decision = acquire(this.counter, LIMIT, T0 + PERIOD + PERIOD / 2, 5);
		assertThat(decision.allowed()).isTrue();
		assertThat(decision.remaining()).isZero();
	}

}
