package io.github.ratelimit.internal.core;

import java.time.Duration;

import org.junit.jupiter.api.Test;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.store.RateLimit;
import io.github.ratelimit.store.RateLimitDecision;
import io.github.ratelimit.store.contract.MutableClock;

import static io.github.ratelimit.internal.core.Requests.acquire;
import static org.assertj.core.api.Assertions.assertThat;

class FixedWindowTest {

	/** Start of a window: the start time is aligned to whole seconds and minutes. */
	private static final long T0 = MutableClock.DEFAULT_START_MICROS;

	private static final long PERIOD = 1_000_000;

	private static final RateLimit LIMIT = RateLimit.of("search", Algorithm.FIXED_WINDOW, 3, Duration.ofSeconds(1));

	private final BucketState window = BucketState.create(LIMIT);

	@Test
	void createsAFixedWindowForTheAlgorithm() {
		assertThat(this.window).isInstanceOf(FixedWindow.class);
		assertThat(this.window.algorithm()).isEqualTo(Algorithm.FIXED_WINDOW);
	}

	@Test
	void admitsCapacityPerWindowAndResetsAtItsEnd() {
		for (long expected = 2; expected >= 0; expected--) {
			RateLimitDecision decision = acquire(this.window, LIMIT, T0 + 100, 1);
			assertThat(decision.allowed()).isTrue();
			assertThat(decision.remaining()).isEqualTo(expected);
			assertThat(decision.resetMicros()).isEqualTo(PERIOD - 100);
		}
	}

	@Test
	void rejectsUntilTheNextWindow() {
		for (int i = 0; i < 3; i++) {
			acquire(this.window, LIMIT, T0 + 100, 1);
		}
		RateLimitDecision decision = acquire(this.window, LIMIT, T0 + 250_000, 1);
		assertThat(decision.allowed()).isFalse();
		assertThat(decision.remaining()).isZero();
		assertThat(decision.retryAfterMicros()).isEqualTo(750_000);
		assertThat(decision.resetMicros()).isEqualTo(750_000);
		assertThat(acquire(this.window, LIMIT, T0 + PERIOD - 1, 1).allowed()).isFalse();
		RateLimitDecision next = acquire(this.window, LIMIT, T0 + PERIOD, 1);
		assertThat(next.allowed()).isTrue();
		assertThat(next.remaining()).isEqualTo(2);
		assertThat(next.resetMicros()).isEqualTo(PERIOD);
	}

	@Test
	void alignsWindowsToTheEpoch() {
		RateLimit perMinute = RateLimit.of("minute", Algorithm.FIXED_WINDOW, 1, Duration.ofMinutes(1));
		BucketState state = BucketState.create(perMinute);
		long fiftyNineSeconds = Duration.ofSeconds(59).toNanos() / 1_000;
		RateLimitDecision first = acquire(state, perMinute, T0 + fiftyNineSeconds, 1);
		assertThat(first.resetMicros()).isEqualTo(1_000_000);
		RateLimitDecision rejected = acquire(state, perMinute, T0 + fiftyNineSeconds + 1, 1);
		assertThat(rejected.retryAfterMicros()).isEqualTo(999_999);
		assertThat(acquire(state, perMinute, T0 + Duration.ofMinutes(1).toNanos() / 1_000, 1).allowed()).isTrue();
	}

	@Test
	void forgetsCountsOfWindowsLongGone() {
		for (int i = 0; i < 3; i++) {
			acquire(this.window, LIMIT, T0, 1);
		}
		assertThat(acquire(this.window, LIMIT, T0 + 10 * PERIOD + 5, 1).remaining()).isEqualTo(2);
	}

	@Test
	void chargesTheCostOfARequest() {
		assertThat(acquire(this.window, LIMIT, T0, 2).remaining()).isEqualTo(1);
		RateLimitDecision rejected = acquire(this.window, LIMIT, T0 + 1, 2);
		assertThat(rejected.allowed()).isFalse();
		assertThat(rejected.remaining()).isEqualTo(1);
		assertThat(rejected.retryAfterMicros()).isEqualTo(PERIOD - 1);
		assertThat(rejected.resetMicros()).isEqualTo(PERIOD - 1);
		RateLimitDecision cheap = acquire(this.window, LIMIT, T0 + 2, 1);
		assertThat(cheap.allowed()).isTrue();
		assertThat(cheap.remaining()).isZero();
	}

	@Test
	void rejectedRequestChangesNothing() {
		acquire(this.window, LIMIT, T0, 2);
		for (int i = 0; i < 5; i++) {
			assertThat(acquire(this.window, LIMIT, T0 + i, 2).allowed()).isFalse();
		}
		assertThat(acquire(this.window, LIMIT, T0 + 10, 1).allowed()).isTrue();
	}

	@Test
	void refundRestoresTheQuotaOfItsWindow() {
		acquire(this.window, LIMIT, T0, 3);
		this.window.refund(LIMIT, T0, 2);
		RateLimitDecision decision = acquire(this.window, LIMIT, T0 + 1, 2);
		assertThat(decision.allowed()).isTrue();
		assertThat(decision.remaining()).isZero();
	}

	@Test
	void refundOfAnEarlierWindowLeavesTheCurrentOneAlone() {
		acquire(this.window, LIMIT, T0, 3);
		acquire(this.window, LIMIT, T0 + PERIOD, 3);
		this.window.refund(LIMIT, T0, 3);
		assertThat(acquire(this.window, LIMIT, T0 + PERIOD + 1, 1).allowed()).isFalse();
	}

}
