package io.github.ratelimit.internal.client;

import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * Waits between two attempts of a retried HTTP call. Tests replace it to record the delays
 * instead of waiting them out.
 */
@FunctionalInterface
public interface RetrySleeper {

	/**
	 * Blocks the calling thread.
	 * @param delay how long, never negative
	 * @throws InterruptedException when the thread is interrupted while waiting
	 */
	void sleep(Duration delay) throws InterruptedException;

	/**
	 * A sleeper that blocks with {@link TimeUnit#sleep(long)}.
	 * @return the system sleeper
	 */
	static RetrySleeper system() {
		return (delay) -> TimeUnit.NANOSECONDS.sleep(delay.toNanos());
	}

}
