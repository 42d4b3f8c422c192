package io.github.ratelimit.internal.overload;

/**
 * Runs a task once after a delay: how an {@link OverloadLimiter} ends the wait of a
 * critical request that no place reached in time, without blocking a thread for it.
 */
@FunctionalInterface
public interface WaitTimer {

	/**
	 * Schedules a task.
	 * @param task what to run
	 * @param delayNanos how long from now, in nanoseconds
	 * @return what cancels the task if it has not run yet
	 */
	Runnable schedule(Runnable task, long delayNanos);

}
