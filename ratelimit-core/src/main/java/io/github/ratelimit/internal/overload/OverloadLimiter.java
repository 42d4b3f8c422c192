package io.github.ratelimit.internal.overload;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.LongSupplier;

import org.jspecify.annotations.Nullable;

import io.github.ratelimit.RequestPriority;

/**
 * A limit on the calls in flight in one instance, learned by an {@link AdaptiveLimit},
 * that admits requests by priority. Critical requests may fill the whole limit; normal
 * requests stop short of the critical reserve; sheddable requests stop short of both
 * reserves, so they are the first turned away as the service saturates.
 * <p>
 * Admission is one compare-and-set on the in-flight count against the priority's ceiling,
 * so concurrent requests never take the count past the limit. Each admitted call hands
 * back its {@link Permit} once, saying how it ended; the adaptive limit learns from calls
 * that succeeded or signalled overload, never from those the client caused (4xx, 429) or
 * abandoned.
 * <p>
 * Cost on the request path: admission reads one volatile array of ceilings and does one
 * compare-and-set; a release decrements the count and then hands the sample to the
 * algorithm under a lock. A successful call's sample is skipped when another thread is
 * updating the limit at that moment (a busy limiter has samples to spare, and no request
 * waits for another's bookkeeping); a drop always waits for the lock, since it is the
 * signal the limit must not miss.
 * <p>
 * With a critical wait, a critical request that finds the limit full may wait for a place
 * ({@link #acquire} parks the thread, {@link #acquireAsync} completes a future), at most
 * as many as the places that free up within the wait, oldest first. A released place then
 * passes straight to the oldest waiter, and while any waits no normal or sheddable request is admitted: the
 * place a sheddable request would take is the one a critical request misses a moment
 * later. Without waiters this costs an admission one more volatile read, and a release
 * two: one to find a waiter to hand the place to, one after giving it back for a waiter that
 * joined meanwhile.
 */
public final class OverloadLimiter implements AutoCloseable {

	private static final int PRIORITIES = RequestPriority.values().length;

	private final AdaptiveLimit algorithm;

	private final double criticalReserve;

	private final double normalReserve;

	private final boolean shadow;

	private final LongSupplier ticker;

	private final AtomicInteger inFlight = new AtomicInteger();

	/** Calls turned away, by priority and reason (ordinals). */
	private final LongAdder[][] shed = new LongAdder[PRIORITIES][ShedReason.values().length];

	private final ReentrantLock sampling = new ReentrantLock();

	private final LongAdder skippedSamples = new LongAdder();

	private final long criticalWaitNanos;

	private final CriticalWaiters waiters;

	/**
	 * The fastest recent round trip, 0 before the first sample: a faster sample replaces
	 * it, a slower one moves it by 1/64 of the difference, so a burst of slow calls (a
	 * pause, a queue) raises it little. Written under the sampling lock.
	 */
	private volatile long fastRttNanos;

	/** The ceiling of each priority, by ordinal; replaced whole when the limit changes. */
	private volatile int[] ceilings;

	OverloadLimiter(OverloadLimiterBuilder builder) {
		this.algorithm = builder.algorithm;
		this.criticalReserve = builder.criticalReserve;
		this.normalReserve = builder.normalReserve;
		this.shadow = builder.shadow;
		this.ticker = builder.ticker;
		this.criticalWaitNanos = builder.criticalWait.toNanos();
		this.waiters = new CriticalWaiters(this, builder.timer);
		this.ceilings = ceilings(Math.max(1, this.algorithm.limit()));
		for (LongAdder[] byReason : this.shed) {
			for (int i = 0; i < byReason.length; i++) {
				byReason[i] = new LongAdder();
			}
		}
	}

	/**
	 * Starts a limiter.
	 * @param algorithm the algorithm that learns the limit
	 * @return a builder
	 */
	public static OverloadLimiterBuilder builder(AdaptiveLimit algorithm) {
		return new OverloadLimiterBuilder(algorithm);
	}

	/**
	 * Admits a call, or turns it away. In shadow mode every call is admitted, and those
	 * that would have been turned away say so.
	 * @param priority the call's priority
	 * @return the permit of an admitted call, to be released when the call ends, or
	 * {@link Permit#SHED} when the call must be turned away
	 */
	public Permit tryAcquire(RequestPriority priority) {
		Permit permit = admit(priority);
		return (permit != null) ? permit : overLimit(priority, ShedReason.LIMIT);
	}

	/** A permit if the priority's ceiling has room, and no critical request waits unless this is one. */
	private @Nullable Permit admit(RequestPriority priority) {
		if (priority != RequestPriority.CRITICAL && this.waiters.waiting() > 0) {
			return null;
		}
		int ceiling = this.ceilings[priority.ordinal()];
		while (true) {
			int current = this.inFlight.get();
			if (current >= ceiling) {
				return null;
			}
			if (this.inFlight.compareAndSet(current, current + 1)) {
				return new Permit(this, current + 1, ceiling, false);
			}
		}
	}

	private Permit overLimit(RequestPriority priority, ShedReason reason) {
		this.shed[priority.ordinal()][reason.ordinal()].increment();
		if (!this.shadow) {
			return Permit.SHED;
		}
		return new Permit(this, this.inFlight.incrementAndGet(), this.ceilings[priority.ordinal()], true);
	}

	/**
	 * Admits a call, waiting on this thread up to a time for a place if it is critical and
	 * the limit is full; any other call is admitted or turned away at once, as by
	 * {@link #tryAcquire}. In shadow mode nothing waits. An interrupt ends the wait: the
	 * call is turned away and the thread stays interrupted.
	 * @param priority the call's priority
	 * @param maxWaitNanos how long a critical call may wait, 0 for not at all
	 * @return the permit of an admitted call, or {@link Permit#SHED}
	 */
	public Permit acquire(RequestPriority priority, long maxWaitNanos) {
		if (priority != RequestPriority.CRITICAL || maxWaitNanos <= 0 || this.shadow) {
			return tryAcquire(priority);
		}
		return this.waiters.await(maxWaitNanos, this.ticker);
	}

	/**
	 * Admits a call without blocking: a critical call that finds the limit full waits up
	 * to the critical wait for a place, and the future completes on the thread that frees
	 * the place, or with {@link Permit#SHED} on the limiter's timer when none came in time.
	 * Cancelling the future while it waits removes the call from the queue; a place handed
	 * over as it is cancelled is given back.
	 * @param priority the call's priority
	 * @return the permit of an admitted call, or {@link Permit#SHED}, now or later
	 */
	public CompletableFuture<Permit> acquireAsync(RequestPriority priority) {
		if (priority != RequestPriority.CRITICAL || this.criticalWaitNanos <= 0 || this.shadow) {
			return CompletableFuture.completedFuture(tryAcquire(priority));
		}
		return this.waiters.awaitAsync(this.criticalWaitNanos);
	}

	/** A place for a critical call unless others already wait for one: they go first. */
	@Nullable Permit admitFirst() {
		return (this.waiters.waiting() == 0) ? admit(RequestPriority.CRITICAL) : null;
	}

	/** Turns away a critical call: the queue was full or its wait ended. */
	Permit shedCritical(ShedReason reason) {
		return overLimit(RequestPriority.CRITICAL, reason);
	}

	/** Takes a free place for a waiter, or answers {@code null} when the limit is full. */
	@Nullable Permit claim() {
		int limit = limit();
		while (true) {
			int current = this.inFlight.get();
			if (current >= limit) {
				return null;
			}
			if (this.inFlight.compareAndSet(current, current + 1)) {
				return new Permit(this, current + 1, limit, false);
			}
		}
	}

	/**
	 * How many critical calls may wait for a place at once: as many as the places that
	 * free up within the wait, {@code limit × wait / round trip}, since a call queued
	 * behind more could not be admitted in time and is better turned away at once; never
	 * fewer than the limit.
	 * @param maxWaitNanos how long a call waits at most
	 */
	int queueBound(long maxWaitNanos) {
		int limit = limit();
		long rtt = this.fastRttNanos;
		if (rtt <= 0) {
			return limit;
		}
		double servable = Math.ceil(limit * ((double) maxWaitNanos / rtt));
		return (int) Math.min(Integer.MAX_VALUE, Math.max(limit, servable));
	}

	/** Returns a place claimed for waiters that had all given up. */
	void giveBack() {
		this.inFlight.decrementAndGet();
	}

	/**
	 * How long a critical call may wait for a place in {@link #acquireAsync}, and in
	 * {@link #acquire} as the front ends call it.
	 * @return the wait in nanoseconds, 0 for none
	 */
	public long criticalWaitNanos() {
		return this.criticalWaitNanos;
	}

	/**
	 * How many critical calls waited for a place and were admitted ({@code true}) or gave
	 * up and were turned away ({@code false}) since the limiter started.
	 * @param admitted which end of the wait to count
	 * @return the count
	 */
	public long waited(boolean admitted) {
		return this.waiters.waited(admitted);
	}

	/**
	 * The critical calls waiting for a place now.
	 * @return the count
	 */
	public int waiting() {
		return this.waiters.waiting();
	}

	/**
	 * Stops the timer the limiter started for asynchronous waits, if any.
	 */
	@Override
	public void close() {
		this.waiters.close();
	}

	/**
	 * How many calls of a priority may be in flight at once under the current limit.
	 * @param priority the priority
	 * @return the ceiling, at least 1
	 */
	public int ceiling(RequestPriority priority) {
		return this.ceilings[priority.ordinal()];
	}

	private int[] ceilings(int limit) {
		int[] ceilings = new int[PRIORITIES];
		for (RequestPriority priority : RequestPriority.values()) {
			double share = switch (priority) {
				case CRITICAL -> 1.0;
				case NORMAL -> 1.0 - this.criticalReserve;
				case SHEDDABLE -> 1.0 - this.criticalReserve - this.normalReserve;
			};
			ceilings[priority.ordinal()] = Math.max(1, (int) Math.floor(limit * share));
		}
		return ceilings;
	}

	/**
	 * The current limit on calls in flight.
	 * @return the limit
	 */
	public int limit() {
		return this.ceilings[RequestPriority.CRITICAL.ordinal()];
	}

	/**
	 * The calls in flight now.
	 * @return the count
	 */
	public int inFlight() {
		return this.inFlight.get();
	}

	/**
	 * How many calls of a priority were turned away (or, in shadow mode, would have been)
	 * since the limiter started.
	 * @param priority the priority
	 * @return the count
	 */
	public long shed(RequestPriority priority) {
		long sum = 0;
		for (LongAdder count : this.shed[priority.ordinal()]) {
			sum += count.sum();
		}
		return sum;
	}

	/**
	 * How many calls of a priority were turned away (or, in shadow mode, would have been)
	 * for a reason since the limiter started.
	 * @param priority the priority
	 * @param reason why they were turned away
	 * @return the count
	 */
	public long shed(RequestPriority priority, ShedReason reason) {
		return this.shed[priority.ordinal()][reason.ordinal()].sum();
	}

	/**
	 * Whether calls that exceed the limit are admitted and only counted.
	 * @return whether the limiter runs in shadow mode
	 */
	public boolean shadow() {
		return this.shadow;
	}

	/**
	 * How many successful calls' samples were skipped because another thread was
	 * updating the limit.
	 */
	long skippedSamples() {
		return this.skippedSamples.sum();
	}

	private void release(Permit permit, Outcome outcome) {
		if (this.waiters.waiting() == 0 || !handOff()) {
			this.inFlight.decrementAndGet();
		}
		sample(permit, outcome);
		// a waiter that joined as the place went back, or a limit the sample raised
		if (this.waiters.waiting() > 0) {
			this.waiters.drain();
		}
	}

	/** Passes a released place to the oldest waiter, unless the limit shrank below it. */
	private boolean handOff() {
		int limit = limit();
		if (this.inFlight.get() > limit) {
			return false;
		}
		return this.waiters.handOff(() -> new Permit(this, this.inFlight.get(), limit, false));
	}

	private void sample(Permit permit, Outcome outcome) {
		if (outcome == Outcome.IGNORED) {
			return;
		}
		long rtt = this.ticker.getAsLong() - permit.startNanos;
		boolean dropped = (outcome == Outcome.DROPPED);
		if (dropped) {
			this.sampling.lock();
		}
		else if (!this.sampling.tryLock()) {
			this.skippedSamples.increment();
			return;
		}
		try {
			long fast = this.fastRttNanos;
			this.fastRttNanos = (fast == 0 || rtt <= fast) ? Math.max(1, rtt) : fast + (rtt - fast) / 64;
			this.algorithm.onSample(permit.startNanos, rtt, permit.inFlight, permit.ceiling, dropped);
			int limit = Math.max(1, this.algorithm.limit());
			if (limit != limit()) {
				this.ceilings = ceilings(limit);
			}
		}
		finally {
			this.sampling.unlock();
		}
	}

	/** How an admitted call ended, as far as the limit is concerned. */
	public enum Outcome {

		/** Answered without signalling overload: its latency is a sample. */
		SUCCEEDED,

		/** A 5xx answer or a timeout: a sign of overload. */
		DROPPED,

		/** Says nothing about the service's capacity: a 4xx, a 429, a client gone away. */
		IGNORED

	}

	/**
	 * An admitted call's place in the limit, released once when the call ends; later
	 * releases do nothing, also when two threads release it at once (a completion racing
	 * a timeout).
	 */
	public static final class Permit {

		private static final VarHandle RELEASED;

		static {
			try {
				RELEASED = MethodHandles.lookup().findVarHandle(Permit.class, "released", boolean.class);
			}
			catch (ReflectiveOperationException ex) {
				throw new ExceptionInInitializerError(ex);
			}
		}

		/** The answer for a call turned away: nothing to release. */
		public static final Permit SHED = new Permit(null, 0, 0, true);

		private final @Nullable OverloadLimiter limiter;

		private final int inFlight;

		private final int ceiling;

		private final long startNanos;

		private final boolean overLimit;

		// read and written only through RELEASED's compare-and-set, which is atomic and
		// ordered on a plain field too; plain, so creating a permit costs no fence
		@SuppressWarnings("unused")
		private boolean released;

		private Permit(@Nullable OverloadLimiter limiter, int inFlight, int ceiling, boolean overLimit) {
			this.limiter = limiter;
			this.inFlight = inFlight;
			this.ceiling = ceiling;
			this.startNanos = (limiter != null) ? limiter.ticker.getAsLong() : 0;
			this.overLimit = overLimit;
			if (limiter == null) {
				this.released = true;
			}
		}

		/**
		 * The calls in flight when this one was admitted, itself included.
		 */
		int inFlightAtStart() {
			return this.inFlight;
		}

		/**
		 * Whether the call must be turned away.
		 * @return {@code true} for {@link #SHED}
		 */
		public boolean shed() {
			return this.limiter == null;
		}

		/**
		 * Whether the call exceeded its priority's share of the limit: turned away, or in
		 * shadow mode admitted anyway.
		 * @return whether the limit was exceeded
		 */
		public boolean overLimit() {
			return this.overLimit;
		}

		/**
		 * Gives the call's place back and lets the limit learn from how it ended.
		 * @param outcome how the call ended
		 */
		public void release(Outcome outcome) {
			if (!RELEASED.compareAndSet(this, false, true)) {
				return;
			}
			OverloadLimiter owner = this.limiter;
			if (owner != null) {
				owner.release(this, outcome);
			}
		}

	}

}
