package io.github.ratelimit.internal.atomic;

import java.time.Duration;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Supplier;

/**
 * A bounded pool that runs a blocking storage's calls, so that no caller waits longer than
 * a deadline for them and no event loop waits at all. Beyond its threads it queues as many
 * calls again, no more: a thread that has just answered a caller takes a moment to be idle
 * again, and a caller calling at once must not fail for that; but when every thread and
 * the queue are busy (the storage hangs), a call fails at once instead of piling up, and
 * the store's fallback decides it. A queued call whose caller stopped waiting is skipped.
 * Daemon threads, created when needed and dropped when idle.
 */
final class BlockingOffload implements AutoCloseable {

	private static final long KEEP_ALIVE_SECONDS = 30;

	private final ThreadPoolExecutor pool;

	private final long timeoutNanos;

	/**
	 * Creates a pool.
	 * @param name what the threads are named after
	 * @param threads most calls running at once
	 * @param timeout longest time a caller waits for one call
	 */
	BlockingOffload(String name, int threads, Duration timeout) {
		if (threads <= 0) {
			throw new IllegalArgumentException("threads must be positive: " + threads);
		}
		if (timeout.isNegative() || timeout.isZero()) {
			throw new IllegalArgumentException("timeout must be positive: " + timeout);
		}
		this.timeoutNanos = timeout.toNanos();
		this.pool = new ThreadPoolExecutor(threads, threads, KEEP_ALIVE_SECONDS, TimeUnit.SECONDS,
				new ArrayBlockingQueue<>(threads), (task) -> {
					Thread thread = new Thread(task, name);
					thread.setDaemon(true);
					return thread;
				});
		this.pool.allowCoreThreadTimeOut(true);
	}

	/**
	 * Runs a call on the pool and waits for it, at most the timeout.
	 * @param <T> the call's result
	 * @param call the call
	 * @return its result
	 * @throws RuntimeException what the call threw, or why it did not answer in time
	 */
	<T> T call(Supplier<T> call) {
		CompletableFuture<T> future = start(call);
		try {
			return future.get(this.timeoutNanos, TimeUnit.NANOSECONDS);
		}
		catch (TimeoutException ex) {
			future.cancel(false);
			throw new StorageTimeoutException(
					"The rate limit storage did not answer within " + Duration.ofNanos(this.timeoutNanos));
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new StorageTimeoutException("Interrupted while waiting for the rate limit storage");
		}
		catch (ExecutionException ex) {
			Throwable cause = ex.getCause();
			if (cause instanceof RuntimeException runtime) {
				throw runtime;
			}
			if (cause instanceof Error error) {
				throw error;
			}
			throw new IllegalStateException(cause);
		}
	}

	/**
	 * Runs a call on the pool without waiting for it.
	 * @param <T> the call's result
	 * @param call the call
	 * @return its result, failed when it did not answer within the timeout or every
	 * thread was busy
	 */
	<T> CompletableFuture<T> submit(Supplier<T> call) {
		return start(call).orTimeout(this.timeoutNanos, TimeUnit.NANOSECONDS);
	}

	private <T> CompletableFuture<T> start(Supplier<T> call) {
		try {
			return CompletableFuture.supplyAsync(call, this.pool);
		}
		catch (RejectedExecutionException ex) {
			return CompletableFuture.failedFuture(
					new StorageTimeoutException("Every thread calling the rate limit storage is busy"));
		}
	}

	@Override
	public void close() {
		this.pool.shutdown();
	}

	/** A storage call that did not answer in time, or could not start. */
	static final class StorageTimeoutException extends RuntimeException {

		StorageTimeoutException(String message) {
			super(message);
		}

	}

}
