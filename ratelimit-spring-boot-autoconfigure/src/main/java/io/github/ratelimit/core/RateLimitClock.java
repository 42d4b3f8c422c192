package io.github.ratelimit.core;

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
		long anchorMicros = TimeUnit.MILLISECONDS.toMicros(System.currentTimeMillis());
		long anchorNanos = System.nanoTime();
		return () -> anchorMicros + (System.nanoTime() - anchorNanos) / 1_000;
	}

}
