package io.github.ratelimit.internal.core;

import java.util.concurrent.TimeUnit;

/**
 * Holds the calling thread for a while. Injected where a caller waits for a permit, so
 * that tests can record the waits (and move their clock) instead of sleeping.
 */
@FunctionalInterface
public interface RateLimitSleeper {

	/**
	 * Sleeps.
	 * @param micros how long, in microseconds; positive
	 * @throws InterruptedException when the thread is interrupted while sleeping
	 */
	void sleep(long micros) throws InterruptedException;

	/**
	 * A sleeper that parks the thread with {@link TimeUnit#sleep(long)}.
	 * @return the system sleeper
	 */
	static RateLimitSleeper system() {
		return TimeUnit.MICROSECONDS::sleep;
	}

}
