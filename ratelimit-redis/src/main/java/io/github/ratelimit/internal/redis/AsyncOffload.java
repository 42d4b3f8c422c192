package io.github.ratelimit.internal.redis;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * One store's pool for its asynchronous calls: where calls that cannot be sent without
 * waiting (several Cluster slots, a connection still being opened, a factory other than
 * Lettuce's) wait instead of on the caller's thread, and where replies are handed on, off
 * Lettuce's I/O thread. Daemon threads, created when first needed and dropped when idle;
 * the pool is shut down when the store is {@link #close() closed}, after which calls fail
 * with {@link RejectedExecutionException}.
 */
final class AsyncOffload implements Executor, AutoCloseable {

	/** How long an idle thread is kept. */
	private static final long KEEP_ALIVE_SECONDS = 60;

	private final String threadName;

	private volatile ThreadPoolExecutor pool;

	private volatile boolean closed;

	/**
	 * Creates a pool whose threads are named so.
	 * @param threadName the name of every thread
	 */
	AsyncOffload(String threadName) {
		this.threadName = threadName;
	}

	@Override
	public void execute(Runnable task) {
		pool().execute(task);
	}

	/**
	 * Runs a task on the pool.
	 * @param <T> the task's result
	 * @param task the task
	 * @return its result, or failed when the pool is closed
	 */
	<T> CompletableFuture<T> supply(Supplier<T> task) {
		try {
			return CompletableFuture.supplyAsync(task, this);
		}
		catch (RejectedExecutionException ex) {
			return CompletableFuture.failedFuture(ex);
		}
	}

	/**
	 * Runs a task on the pool.
	 * @param task the task
	 * @return its completion, or failed when the pool is closed
	 */
	CompletableFuture<Void> run(Runnable task) {
		try {
			return CompletableFuture.runAsync(task, this);
		}
		catch (RejectedExecutionException ex) {
			return CompletableFuture.failedFuture(ex);
		}
	}

	/** Whether the pool was {@link #close() closed}. */
	boolean isClosed() {
		return this.closed;
	}

	/** The failure of a task given to a closed pool. */
	static RejectedExecutionException closed() {
		return new RejectedExecutionException("The Redis rate limit store is closed");
	}

	/** Shuts the pool down: running tasks finish, idle threads end, no task is accepted. */
	@Override
	public void close() {
		ThreadPoolExecutor running;
		synchronized (this) {
			this.closed = true;
			running = this.pool;
		}
		if (running != null) {
			running.shutdown();
		}
	}

	private ThreadPoolExecutor pool() {
		ThreadPoolExecutor current = this.pool;
		if (current != null) {
			return current;
		}
		synchronized (this) {
			if (this.closed) {
				throw closed();
			}
			if (this.pool == null) {
				this.pool = new ThreadPoolExecutor(0, Integer.MAX_VALUE, KEEP_ALIVE_SECONDS, TimeUnit.SECONDS,
						new SynchronousQueue<>(), (task) -> {
							Thread thread = new Thread(task, this.threadName);
							thread.setDaemon(true);
							return thread;
						});
			}
			return this.pool;
		}
	}

}
