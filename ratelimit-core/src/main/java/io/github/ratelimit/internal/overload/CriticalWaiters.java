package io.github.ratelimit.internal.overload;

import java.util.ArrayDeque;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.LongSupplier;
import java.util.function.Supplier;

import org.jspecify.annotations.Nullable;

import io.github.ratelimit.internal.overload.OverloadLimiter.Outcome;
import io.github.ratelimit.internal.overload.OverloadLimiter.Permit;

/**
 * The critical requests waiting for a place in an {@link OverloadLimiter}, oldest first.
 * <p>
 * A waiter's fate is decided once, by a compare-and-set on its result: the place a
 * releasing thread hands over, or its giving up (a timeout, an interrupt, a cancelled
 * exchange). A place offered to a waiter that gave up goes to the next one, or back to the
 * pool; it is never lost nor given twice. The queue itself changes under a lock, which only
 * requests that wait or release while others wait ever take, held for the queue's own
 * operations only: waiters are woken, and futures completed, after it is let go.
 */
final class CriticalWaiters {

	private final OverloadLimiter limiter;

	private final @Nullable WaitTimer givenTimer;

	/** The timer started on the first asynchronous wait, when none was given. */
	private @Nullable ScheduledThreadPoolExecutor ownTimer;

	private volatile boolean closed;

	private final LongAdder admittedCount = new LongAdder();

	private final LongAdder shedCount = new LongAdder();

	private final ReentrantLock lock = new ReentrantLock();

	private final ArrayDeque<Waiter> queue = new ArrayDeque<>();

	/** The queue's length, read without the lock on every admission and release. */
	private volatile int waiting;

	CriticalWaiters(OverloadLimiter limiter, @Nullable WaitTimer timer) {
		this.limiter = limiter;
		this.givenTimer = timer;
	}

	int waiting() {
		return this.waiting;
	}

	long waited(boolean admitted) {
		return admitted ? this.admittedCount.sum() : this.shedCount.sum();
	}

	/** Waits on this thread for a place, at most a time. */
	Permit await(long maxWaitNanos, LongSupplier ticker) {
		Permit permit = this.limiter.admitFirst();
		if (permit != null) {
			return permit;
		}
		Waiter waiter = new Waiter(Thread.currentThread(), null);
		if (!join(waiter, maxWaitNanos)) {
			return this.limiter.shedCritical(ShedReason.QUEUE);
		}
		long deadline = ticker.getAsLong() + maxWaitNanos;
		boolean interrupted = false;
		while (waiter.waits()) {
			long remaining = deadline - ticker.getAsLong();
			interrupted = Thread.interrupted();
			if (remaining <= 0 || interrupted) {
				giveUp(waiter);
				break;
			}
			LockSupport.parkNanos(this, remaining);
		}
		if (interrupted) {
			Thread.currentThread().interrupt();
		}
		Permit result = waiter.result.get();
		return (result != null) ? result : Permit.SHED;
	}

	/** Waits for a place without blocking, at most a time measured by the timer. */
	CompletableFuture<Permit> awaitAsync(long maxWaitNanos) {
		Permit permit = this.limiter.admitFirst();
		if (permit != null) {
			return CompletableFuture.completedFuture(permit);
		}
		CompletableFuture<Permit> future = new CompletableFuture<>();
		Waiter waiter = new Waiter(null, future);
		if (this.closed) {
			return CompletableFuture.completedFuture(this.limiter.shedCritical(ShedReason.WAIT));
		}
		if (!join(waiter, maxWaitNanos)) {
			return CompletableFuture.completedFuture(this.limiter.shedCritical(ShedReason.QUEUE));
		}
		if (waiter.waits()) {
			try {
				waiter.timer(timer().schedule(() -> {
					if (giveUp(waiter)) {
						waiter.shed();
					}
				}, maxWaitNanos));
			}
			catch (RejectedExecutionException ex) {
				// closed as the call joined: nothing would end its wait
				if (giveUp(waiter)) {
					waiter.shed();
				}
			}
			future.whenComplete((admitted, failure) -> {
				// cancelled by the caller: leave the queue; admitted meanwhile, wake gives the place back
				if (future.isCancelled() && waiter.giveUp()) {
					remove(waiter);
				}
			});
		}
		return future;
	}

	/**
	 * Queues a waiter, then admits waiters if a place is free: a release that looked for
	 * waiters before this one joined has given its place back to the pool.
	 */
	private boolean join(Waiter waiter, long maxWaitNanos) {
		if (!enqueue(waiter, this.limiter.queueBound(maxWaitNanos))) {
			return false;
		}
		drain();
		return true;
	}

	/** Ends a wait that no place reached in time: the call is shed, once. */
	private boolean giveUp(Waiter waiter) {
		if (!waiter.giveUp()) {
			return false;
		}
		remove(waiter);
		this.limiter.shedCritical(ShedReason.WAIT);
		this.shedCount.increment();
		return true;
	}

	/** Admits waiters while the limit has room, as after it grew. */
	void drain() {
		drain(this.limiter::claim, this.limiter::giveBack);
	}

	private synchronized WaitTimer timer() {
		if (this.givenTimer != null) {
			return this.givenTimer;
		}
		ScheduledThreadPoolExecutor executor = this.ownTimer;
		if (executor == null) {
			executor = new ScheduledThreadPoolExecutor(1, (task) -> {
				Thread thread = new Thread(task, "ratelimit-overload-wait");
				thread.setDaemon(true);
				return thread;
			});
			executor.setRemoveOnCancelPolicy(true);
			this.ownTimer = executor;
		}
		ScheduledThreadPoolExecutor scheduler = executor;
		return (task, delayNanos) -> {
			ScheduledFuture<?> scheduled = scheduler.schedule(task, delayNanos, TimeUnit.NANOSECONDS);
			return () -> scheduled.cancel(false);
		};
	}

	/** Turns the waiters away, so that none waits for a timer that is gone, and stops the timer. */
	void close() {
		this.closed = true;
		ArrayDeque<Waiter> left;
		this.lock.lock();
		try {
			left = new ArrayDeque<>(this.queue);
		}
		finally {
			this.lock.unlock();
		}
		for (Waiter waiter : left) {
			if (giveUp(waiter)) {
				waiter.shed();
			}
		}
		synchronized (this) {
			if (this.ownTimer != null) {
				this.ownTimer.shutdownNow();
			}
		}
	}

	/**
	 * Joins the queue, unless it already holds {@code bound} waiters.
	 * @return whether the waiter joined
	 */
	private boolean enqueue(Waiter waiter, int bound) {
		this.lock.lock();
		try {
			if (this.queue.size() >= Math.max(1, bound)) {
				return false;
			}
			this.queue.addLast(waiter);
			this.waiting = this.queue.size();
			return true;
		}
		finally {
			this.lock.unlock();
		}
	}

	/**
	 * Hands a released place to the oldest waiter that still waits.
	 * @param permit makes the permit of the admitted waiter
	 * @return whether a waiter took the place
	 */
	boolean handOff(Supplier<Permit> permit) {
		Waiter admitted = null;
		this.lock.lock();
		try {
			Waiter next;
			while (admitted == null && (next = this.queue.pollFirst()) != null) {
				if (next.offer(permit.get())) {
					admitted = next;
				}
			}
			this.waiting = this.queue.size();
		}
		finally {
			this.lock.unlock();
		}
		if (admitted == null) {
			return false;
		}
		this.admittedCount.increment();
		admitted.wake();
		return true;
	}

	/**
	 * Admits the oldest waiters while the limit has room, as after the limit grew or a
	 * release that found no waiter yet.
	 * @param claim takes a place in the limit and makes its permit, or answers
	 * {@code null} when the limit is full
	 * @param giveBack returns a claimed place no waiter took
	 */
	private void drain(Supplier<@Nullable Permit> claim, Runnable giveBack) {
		ArrayDeque<Waiter> admitted = null;
		this.lock.lock();
		try {
			while (!this.queue.isEmpty()) {
				Permit permit = claim.get();
				if (permit == null) {
					break;
				}
				Waiter taker = null;
				Waiter next;
				while (taker == null && (next = this.queue.pollFirst()) != null) {
					if (next.offer(permit)) {
						taker = next;
					}
				}
				if (taker == null) {
					giveBack.run();
					break;
				}
				if (admitted == null) {
					admitted = new ArrayDeque<>();
				}
				admitted.add(taker);
			}
			this.waiting = this.queue.size();
		}
		finally {
			this.lock.unlock();
		}
		if (admitted != null) {
			for (Waiter waiter : admitted) {
				this.admittedCount.increment();
				waiter.wake();
			}
		}
	}

	/** Takes a waiter that gave up out of the queue. */
	private void remove(Waiter waiter) {
		this.lock.lock();
		try {
			this.queue.remove(waiter);
			this.waiting = this.queue.size();
		}
		finally {
			this.lock.unlock();
		}
	}

	/**
	 * A critical request waiting for a place: a parked thread, or a future completed by the
	 * thread that admits it.
	 */
	static final class Waiter {

		private final AtomicReference<@Nullable Permit> result = new AtomicReference<>();

		private final @Nullable Thread thread;

		private final @Nullable CompletableFuture<Permit> future;

		private volatile @Nullable Runnable cancelTimer;

		Waiter(@Nullable Thread thread, @Nullable CompletableFuture<Permit> future) {
			this.thread = thread;
			this.future = future;
		}

		void timer(Runnable cancel) {
			this.cancelTimer = cancel;
			if (!waits()) {
				cancel.run();
			}
		}

		boolean waits() {
			return this.result.get() == null;
		}

		boolean offer(Permit permit) {
			return this.result.compareAndSet(null, permit);
		}

		boolean giveUp() {
			return this.result.compareAndSet(null, Permit.SHED);
		}

		/** Tells the waiter it gave up. */
		private void shed() {
			if (this.thread != null) {
				LockSupport.unpark(this.thread);
			}
			if (this.future != null) {
				this.future.complete(Permit.SHED);
			}
		}

		/** Tells the waiter it was admitted; a future cancelled meanwhile gives the place back. */
		private void wake() {
			Permit permit = this.result.get();
			if (this.thread != null) {
				LockSupport.unpark(this.thread);
			}
			CompletableFuture<Permit> completing = this.future;
			if (completing != null && permit != null) {
				Runnable cancel = this.cancelTimer;
				if (cancel != null) {
					cancel.run();
				}
				if (!completing.complete(permit)) {
					permit.release(Outcome.IGNORED);
				}
			}
		}

	}

}
