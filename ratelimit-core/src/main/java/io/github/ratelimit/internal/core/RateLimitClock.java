package io.github.ratelimit.internal.core;

import java.util.concurrent.TimeUnit;

/**
 * Source of time for rate limit decisions, in microseconds since the epoch. Windows are
 * aligned to the epoch, so the value must be wall-clock based; the system implementation
 * is anchored once and then advances monotonically.
 */
@FunctionalInterface
public interface RateLimitClock {

	/**
	 * Current time.
	 * @return microseconds since 1970-01-01T00:00:00Z
	 */
	long nowMicros();

	/**
	 * A clock anchored to the wall clock at creation that advances with
	 * {@link System#nanoTime()}, so it never goes backwards when the wall clock is adjusted.
	 * @return the system clock
	 */
	static RateLimitClock system() {
		return new SystemClock();
	}

	/**
	 * Whether a clock is a {@link #system()} clock: stores that keep their own time (Redis
	 * decides at its {@code TIME}, so instances with skewed clocks agree) follow any other
	 * clock, which only tests provide.
	 * @param clock the clock
	 * @return whether it is the system clock
	 */
	static boolean isSystem(RateLimitClock clock) {
		return clock instanceof SystemClock;
	}

	/** The system clock: wall-clock anchored, advancing monotonically. */
	final class SystemClock implements RateLimitClock {

		private final long anchorMicros = TimeUnit.MILLISECONDS.toMicros(System.currentTimeMillis());

		private final long anchorNanos = System.nanoTime();

		private SystemClock() {
		}

		@Override
		public long nowMicros() {
			return this.anchorMicros + (System.nanoTime() - this.anchorNanos) / 1_000;
		}

	}

}
