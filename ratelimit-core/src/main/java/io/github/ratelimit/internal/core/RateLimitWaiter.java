package io.github.ratelimit.internal.core;

import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;

import io.github.ratelimit.RateLimitExceededException;
import io.github.ratelimit.store.Acquisition;
import io.github.ratelimit.store.RateLimitDecision;
import io.github.ratelimit.store.RateLimitResult;
import io.github.ratelimit.store.RateLimitStore;

/**
 * Waits for a permit instead of failing at once, for at most a given time.
 * <p>
 * Token and leaky buckets are waited for fairly: the store reserves the caller's slot
 * atomically ({@link RateLimitStore#tryAcquire(List, long)}) and the caller sleeps until
 * it, so callers are released in the order they asked, one emission interval apart,
 * rather than all at once when a token appears. The window algorithms cannot reserve: the
 * caller retries after the retry-after each rejection names, for as long as that stays
 * within the wait, and a concurrent caller may take the quota first.
 * <p>
 * A waiter interrupted while it holds a reservation gives it back, keeps its interrupt
 * flag and is answered with a {@link RateLimitExceededException}. Asynchronous waits
 * ({@link #acquireAsync}) hold no thread: they are timed on a scheduler owned by this
 * waiter (one daemon thread, created on first use and shut down by {@link #close()}).
 */
public final class RateLimitWaiter implements AutoCloseable {

	private final RateLimiter limiter;

	private final RateLimitClock clock;

	private final RateLimitSleeper sleeper;

	private final AtomicReference<ScheduledExecutorService> scheduler = new AtomicReference<>();

	private final Set<AsyncWait> pending = ConcurrentHashMap.newKeySet();

	private volatile boolean closed;

	/**
	 * Creates a waiter that measures on the system clock and sleeps for real.
	 * @param limiter decides
	 */
	public RateLimitWaiter(RateLimiter limiter) {
		this(limiter, RateLimitClock.system(), RateLimitSleeper.system(), null);
	}

	/**
	 * Creates a waiter.
	 * @param limiter decides
	 * @param clock measures how long a caller has waited
	 * @param sleeper holds callers that wait synchronously
	 * @param scheduler times asynchronous waits, or {@code null} to create one on first
	 * use; shut down by {@link #close()} either way
	 */
	public RateLimitWaiter(RateLimiter limiter, RateLimitClock clock, RateLimitSleeper sleeper,
			ScheduledExecutorService scheduler) {
		this.limiter = limiter;
		this.clock = clock;
		this.sleeper = sleeper;
		this.scheduler.set(scheduler);
	}

	/**
	 * Decides the acquisitions, waiting up to {@code maxWait} for them to be admitted.
	 * Returns once the caller may proceed (its reserved or drain slot has come), or as
	 * soon as waiting would take longer than {@code maxWait}.
	 * @param acquisitions the acquisitions of the call
	 * @param maxWait the longest wait
	 * @return the admitting result, or the rejecting one when waiting would take too long
	 * @throws RateLimitExceededException when interrupted while waiting; the interrupt
	 * flag is kept and a reservation given back
	 */
	public RateLimitResult acquire(List<Acquisition> acquisitions, Duration maxWait) {
		long maxWaitMicros = toMicros(maxWait);
		long start = this.clock.nowMicros();
		long slept = 0;
		while (true) {
			long left = maxWaitMicros - Math.max(this.clock.nowMicros() - start, slept);
			// watched before deciding, so that a release right after the rejection is not missed
			ReleaseWait release = (maxWaitMicros > 0) ? this.limiter.watchReleases(acquisitions) : null;
			try {
				RateLimitResult result = this.limiter.acquire(acquisitions, Math.max(0, left));
				if (result.allowed()) {
					sleepUntilSlot(acquisitions, result);
					return result;
				}
				long retry = retryAfter(result);
				if (retry > left) {
					return result;
				}
				try {
					// a concurrency limit's waiter wakes when a call gives its permit back
					slept += (release != null) ? awaitRelease(release, retry) : sleep(retry);
				}
				catch (InterruptedException ex) {
					Thread.currentThread().interrupt();
					throw interrupted(result, retry);
				}
			}
			finally {
				if (release != null) {
					release.close();
				}
			}
		}
	}

	/**
	 * Decides the acquisitions without holding the calling thread while it waits: the
	 * first decision is made on the calling thread, the rest is timed on the scheduler.
	 * Cancelling the returned future before it completes gives the reservation back.
	 * @param acquisitions the acquisitions of the call
	 * @param maxWait the longest wait
	 * @return completes with the admitting result when the caller may proceed, or with
	 * the rejecting one as soon as waiting would take too long; completes exceptionally
	 * when the store fails or the waiter is closed
	 */
	public CompletableFuture<RateLimitResult> acquireAsync(List<Acquisition> acquisitions, Duration maxWait) {
		AsyncWait wait = new AsyncWait(acquisitions, toMicros(maxWait), this.clock.nowMicros());
		wait.attempt();
		return wait.future;
	}

	/**
	 * Stops timing asynchronous waits: those still waiting complete exceptionally and
	 * give their reservations back.
	 */
	@Override
	public void close() {
		this.closed = true;
		ScheduledExecutorService executor = this.scheduler.get();
		if (executor != null) {
			executor.shutdownNow();
		}
		for (AsyncWait wait : this.pending) {
			wait.fail(new CancellationException("The rate limit waiter was closed"));
		}
	}

	/**
	 * Sleeps for the retry-after; a clock standing still (or behind) still counts it, so
	 * the loop never waits forever.
	 */
	private long sleep(long retry) throws InterruptedException {
		this.sleeper.sleep(retry);
		return retry;
	}

	/** Waits for a release or the retry-after, whichever comes first; returns the time waited. */
	private static long awaitRelease(ReleaseWait release, long retry) throws InterruptedException {
		long before = System.nanoTime();
		if (!release.await(retry)) {
			return retry;
		}
		return Math.max(1, TimeUnit.NANOSECONDS.toMicros(System.nanoTime() - before));
	}

	private void sleepUntilSlot(List<Acquisition> acquisitions, RateLimitResult result) {
		long delay = result.delayMicros();
		if (delay <= 0) {
			return;
		}
		try {
			this.sleeper.sleep(delay);
		}
		catch (InterruptedException ex) {
			this.limiter.refund(acquisitions, result);
			Thread.currentThread().interrupt();
			throw interrupted(result, delay);
		}
	}

	private ScheduledExecutorService scheduler() {
		ScheduledExecutorService executor = this.scheduler.get();
		if (executor == null) {
			ScheduledExecutorService created = Executors.newSingleThreadScheduledExecutor((task) -> {
				Thread thread = new Thread(task, "ratelimit-wait");
				thread.setDaemon(true);
				return thread;
			});
			if (this.scheduler.compareAndSet(null, created)) {
				executor = created;
			}
			else {
				created.shutdown();
				executor = this.scheduler.get();
			}
			if (this.closed) {
				executor.shutdownNow();
			}
		}
		return executor;
	}

	private static long retryAfter(RateLimitResult result) {
		long retry = 1;
		for (RateLimitDecision decision : result.rejections()) {
			retry = Math.max(retry, decision.retryAfterMicros());
		}
		return retry;
	}

	private static long toMicros(Duration maxWait) {
		if (maxWait.isNegative()) {
			throw new IllegalArgumentException("maxWait must not be negative: " + maxWait);
		}
		return TimeUnit.NANOSECONDS.toMicros(maxWait.toNanos());
	}

	private static RateLimitExceededException interrupted(RateLimitResult result, long waitMicros) {
		List<String> names = result.decisions().stream().map((decision) -> decision.limit().name()).distinct().toList();
		return new RateLimitExceededException("Interrupted while waiting for a permit of " + names, result.decisions(),
				Duration.ofNanos(waitMicros * 1_000));
	}

	/** One asynchronous wait: decides, then schedules its release or its next attempt. */
	private final class AsyncWait {

		private final List<Acquisition> acquisitions;

		private final long maxWaitMicros;

		private final long start;

		private final CompletableFuture<RateLimitResult> future = new CompletableFuture<>();

		/** The reservation waiting for its slot; taken by whoever ends the wait first. */
		private final AtomicReference<RateLimitResult> reserved = new AtomicReference<>();

		private long slept;

		AsyncWait(List<Acquisition> acquisitions, long maxWaitMicros, long start) {
			this.acquisitions = acquisitions;
			this.maxWaitMicros = maxWaitMicros;
			this.start = start;
			this.future.whenComplete((result, failure) -> {
				RateLimitWaiter.this.pending.remove(this);
				if (this.future.isCancelled()) {
					giveBack();
				}
			});
		}

		void attempt() {
			if (this.future.isDone()) {
				return;
			}
			RateLimitResult result;
			long left = this.maxWaitMicros - Math.max(RateLimitWaiter.this.clock.nowMicros() - this.start, this.slept);
			ReleaseWait release = (this.maxWaitMicros > 0) ? RateLimitWaiter.this.limiter.watchReleases(this.acquisitions)
					: null;
			try {
				result = RateLimitWaiter.this.limiter.acquire(this.acquisitions, Math.max(0, left));
			}
			catch (RuntimeException ex) {
				close(release);
				this.future.completeExceptionally(ex);
				return;
			}
			if (release != null && (result.allowed() || retryAfter(result) > left)) {
				release.close();
				release = null;
			}
			if (result.allowed()) {
				long delay = result.delayMicros();
				if (delay <= 0) {
					complete(result);
					return;
				}
				this.reserved.set(result);
				if (this.future.isDone()) {
					// cancelled while the store decided: whoever takes the reservation gives it back
					giveBack();
					return;
				}
				schedule(this::release, delay);
				return;
			}
			long retry = retryAfter(result);
			if (retry > left) {
				this.future.complete(result);
				return;
			}
			if (release == null) {
				this.slept += retry;
				schedule(this::attempt, retry);
				return;
			}
			// a concurrency limit's waiter tries again when a call gives its permit back, or
			// after the retry-after, whichever comes first
			ReleaseWait watching = release;
			AtomicBoolean woken = new AtomicBoolean();
			long since = System.nanoTime();
			Runnable again = () -> {
				if (woken.compareAndSet(false, true)) {
					watching.close();
					this.slept += Math.min(retry, Math.max(1, TimeUnit.NANOSECONDS.toMicros(System.nanoTime() - since)));
					attempt();
				}
			};
			watching.released().thenRun(() -> schedule(again, 0));
			// a wait that ends otherwise (cancelled, the waiter closed) stops watching too
			this.future.whenComplete((done, failure) -> watching.close());
			schedule(again, retry);
		}

		private static void close(ReleaseWait release) {
			if (release != null) {
				release.close();
			}
		}

		void release() {
			RateLimitResult result = this.reserved.getAndSet(null);
			if (result != null) {
				complete(result);
			}
		}

		/** Hands an admitted result to the caller, or gives it back if the caller is gone. */
		private void complete(RateLimitResult result) {
			if (!this.future.complete(result) && result.allowed()) {
				RateLimitWaiter.this.limiter.refund(this.acquisitions, result);
			}
		}

		void fail(Throwable failure) {
			giveBack();
			this.future.completeExceptionally(failure);
		}

		private void giveBack() {
			RateLimitResult result = this.reserved.getAndSet(null);
			if (result != null) {
				RateLimitWaiter.this.limiter.refund(this.acquisitions, result);
			}
		}

		private void schedule(Runnable task, long micros) {
			RateLimitWaiter.this.pending.add(this);
			if (this.future.isDone()) {
				// ended meanwhile: its completion has already left the pending set
				RateLimitWaiter.this.pending.remove(this);
				return;
			}
			try {
				if (RateLimitWaiter.this.closed) {
					throw new RejectedExecutionException("closed");
				}
				scheduler().schedule(task, micros, TimeUnit.MICROSECONDS);
			}
			catch (RejectedExecutionException ex) {
				fail(new CancellationException("The rate limit waiter was closed"));
			}
		}

	}

}
