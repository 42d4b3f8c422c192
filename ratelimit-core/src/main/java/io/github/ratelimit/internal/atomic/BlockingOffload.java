package io.github.ratelimit.internal.atomic;

import java.time.Duration;
import java.util.Set;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.Semaphore;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;

/**
 * Bounds a blocking storage's calls: at most {@code threads} run at once, and a call beyond
 * them waits for a permit within its deadline: a burst on a healthy storage waits its
 * turn, and a storage that hangs fails its callers at their deadline (the store's fallback
 * decides) instead of holding them longer.
 * <p>
 * A caller that may block (a servlet thread) runs its call itself, which costs no hand-off
 * between threads: a watchdog interrupts it once the timeout has passed, which ends a wait
 * for a pooled connection, and the storage bounds its own I/O by the same time (the
 * PostgreSQL storage gives its connection that network timeout). The watchdog looks at
 * the calls in flight a few times per timeout rather than being woken for each call, so a
 * call costs no wake-up of another thread; it interrupts within a tenth of the timeout
 * after it passed. The interrupt is cleared before the caller returns, so it never leaks
 * into the application (an interrupt the application sent during a call that outlasted its
 * deadline is cleared with it). A caller that must not block (an
 * event loop) hands its call to a pool of the store's own and is answered when it ends, or
 * fails after the timeout; the pool's thread is interrupted at the same deadline. Daemon
 * threads, created when needed and dropped when idle.
 */
final class BlockingOffload implements AutoCloseable {

	private static final long KEEP_ALIVE_SECONDS = 30;

	private static final int QUEUED_ROUNDS = 4;

	private final Semaphore permits;

	private final ThreadPoolExecutor pool;

	private final ScheduledThreadPoolExecutor deadlines;

	private final long timeoutNanos;

	private final long watchNanos;

	private final Set<Deadline> running = ConcurrentHashMap.newKeySet();

	private volatile boolean watching;

	/**
	 * Creates the bounds of one store.
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
		this.watchNanos = Math.max(TimeUnit.MILLISECONDS.toNanos(1), this.timeoutNanos / 10);
		this.permits = new Semaphore(threads);
		// asynchronous calls wait here for a thread, and on it for a permit, within their
		// deadline; beyond a few rounds of waiting calls the storage is hung, and a call
		// fails at once
		this.pool = new ThreadPoolExecutor(threads, threads, KEEP_ALIVE_SECONDS, TimeUnit.SECONDS,
				new ArrayBlockingQueue<>(QUEUED_ROUNDS * threads), (task) -> daemon(task, name));
		this.pool.allowCoreThreadTimeOut(true);
		this.deadlines = new ScheduledThreadPoolExecutor(1, (task) -> daemon(task, name + "-deadline"));
		this.deadlines.setExecuteExistingDelayedTasksAfterShutdownPolicy(false);
		this.deadlines.setKeepAliveTime(KEEP_ALIVE_SECONDS, TimeUnit.SECONDS);
		this.deadlines.allowCoreThreadTimeOut(true);
	}

	/**
	 * Runs a call on the calling thread, interrupted if it outlasts the timeout.
	 * @param <T> the call's result
	 * @param call the call
	 * @return its result
	 * @throws RuntimeException what the call threw, or why it did not answer in time
	 */
	<T> T call(Supplier<T> call) {
		if (this.deadlines.isShutdown()) {
			throw closed();
		}
		long due = System.nanoTime() + this.timeoutNanos;
		acquire(due);
		return runBefore(due, call);
	}

	/**
	 * Takes a permit, waiting for one until {@code due}: a burst of callers beyond the
	 * permits waits its turn rather than failing, which a breaker would count against a
	 * healthy storage.
	 */
	private void acquire(long due) {
		try {
			if (!this.permits.tryAcquire(Math.max(0, due - System.nanoTime()), TimeUnit.NANOSECONDS)) {
				throw busy();
			}
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new StorageTimeoutException("Interrupted while waiting to call the rate limit storage");
		}
	}

	/** Runs a call holding a permit, interrupted if it is still running at {@code due}. */
	private <T> T runBefore(long due, Supplier<T> call) {
		try {
			watch();
		}
		catch (RejectedExecutionException ex) {
			this.permits.release();
			throw closed();
		}
		Deadline deadline = new Deadline(Thread.currentThread(), due);
		this.running.add(deadline);
		try {
			return call.get();
		}
		catch (RuntimeException ex) {
			if (deadline.passed()) {
				StorageTimeoutException timeout = timedOut();
				timeout.initCause(ex);
				throw timeout;
			}
			throw ex;
		}
		finally {
			this.running.remove(deadline);
			deadline.end();
			this.permits.release();
		}
	}

	/** Starts the watchdog on the first call. */
	private void watch() {
		if (!this.watching) {
			synchronized (this) {
				if (!this.watching) {
					this.deadlines.scheduleAtFixedRate(this::interruptOverdue, this.watchNanos, this.watchNanos,
							TimeUnit.NANOSECONDS);
					this.watching = true;
				}
			}
		}
	}

	/** Interrupts the calls whose deadline passed. */
	private void interruptOverdue() {
		long now = System.nanoTime();
		for (Deadline deadline : this.running) {
			if (now - deadline.dueNanos >= 0) {
				deadline.run();
			}
		}
	}

	/**
	 * Runs a call on the pool without waiting for it.
	 * @param <T> the call's result
	 * @param call the call
	 * @return its result, failed when it did not answer within the timeout or every
	 * permit was taken
	 */
	<T> CompletableFuture<T> submit(Supplier<T> call) {
		long due = System.nanoTime() + this.timeoutNanos;
		try {
			return CompletableFuture.supplyAsync(() -> {
				acquire(due);
				return runBefore(due, call);
			}, this.pool).orTimeout(this.timeoutNanos, TimeUnit.NANOSECONDS);
		}
		catch (RejectedExecutionException ex) {
			return CompletableFuture.failedFuture(this.pool.isShutdown() ? closed() : busy());
		}
	}

	@Override
	public void close() {
		this.pool.shutdown();
		this.deadlines.shutdown();
	}

	private StorageTimeoutException timedOut() {
		return new StorageTimeoutException(
				"The rate limit storage did not answer within " + Duration.ofNanos(this.timeoutNanos));
	}

	private static StorageTimeoutException busy() {
		return new StorageTimeoutException("Every call the rate limit storage may run at once is busy");
	}

	private static StorageTimeoutException closed() {
		return new StorageTimeoutException("The rate limit store is closed");
	}

	private static Thread daemon(Runnable task, String name) {
		Thread thread = new Thread(task, name);
		thread.setDaemon(true);
		return thread;
	}

	/**
	 * The deadline of one call on its caller's thread: interrupts the caller once, unless
	 * the call ended first, and takes the interrupt back when it ends.
	 */
	private static final class Deadline implements Runnable {

		private static final int RUNNING = 0;

		private static final int PASSING = 1;

		private static final int PASSED = 2;

		private static final int ENDED = 3;

		private final AtomicInteger state = new AtomicInteger(RUNNING);

		private final Thread caller;

		private final long dueNanos;

		Deadline(Thread caller, long dueNanos) {
			this.caller = caller;
			this.dueNanos = dueNanos;
		}

		@Override
		public void run() {
			if (this.state.compareAndSet(RUNNING, PASSING)) {
				this.caller.interrupt();
				this.state.set(PASSED);
			}
		}

		/** Whether the deadline passed while the call ran. */
		boolean passed() {
			return this.state.get() != RUNNING;
		}

		/** Ends the call; clears the interrupt the deadline set, once it is set. */
		void end() {
			if (this.state.compareAndSet(RUNNING, ENDED)) {
				return;
			}
			while (this.state.get() == PASSING) {
				Thread.onSpinWait();
			}
			Thread.interrupted();
		}

	}

	/** A storage call that did not answer in time, or could not start. */
	static final class StorageTimeoutException extends RuntimeException {

		StorageTimeoutException(String message) {
			super(message);
		}

	}

}
