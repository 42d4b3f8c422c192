package io.github.ratelimit.internal.core;

import java.time.Duration;

import org.junit.jupiter.api.Test;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.store.RateLimit;
import io.github.ratelimit.store.contract.MutableClock;

import static io.github.ratelimit.internal.core.Requests.acquire;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * A client that sends a full quota at the end of one window and another at the start of
 * the next: fixed windows let both through, the sliding algorithms do not.
 */
class WindowBoundaryBurstTest {

	/** Start of a window: the start time is aligned to whole seconds. */
	private static final long T0 = MutableClock.DEFAULT_START_MICROS;

	private static final long PERIOD = 1_000_000;

	private static final int CAPACITY = 5;

	@Test
	void fixedWindowAdmitsTwiceTheCapacityAcrossABoundary() {
		assertThat(admittedAcrossBoundary(Algorithm.FIXED_WINDOW)).isEqualTo(2 * CAPACITY);
	}

	@Test
	void slidingWindowLogAdmitsNoMoreThanTheCapacityAcrossABoundary() {
		assertThat(admittedAcrossBoundary(Algorithm.SLIDING_WINDOW_LOG)).isEqualTo(CAPACITY);
	}

	@Test
	void slidingWindowCounterAdmitsNoMoreThanTheCapacityAcrossABoundary() {
		assertThat(admittedAcrossBoundary(Algorithm.SLIDING_WINDOW_COUNTER)).isEqualTo(CAPACITY);
	}

	/** Sends two full quotas, one microsecond apart, on either side of a window boundary. */
	private static int admittedAcrossBoundary(Algorithm algorithm) {
		RateLimit limit = RateLimit.of("burst", algorithm, CAPACITY, Duration.ofSeconds(1));
		BucketState state = BucketState.create(limit);
		int admitted = 0;
		for (long now : new long[] { T0 + PERIOD - 1, T0 + PERIOD }) {
			for (int i = 0; i < CAPACITY; i++) {
				if (acquire(state, limit, now, 1).allowed()) {
					admitted++;
				}
			}
		}
		return admitted;
	}

}
