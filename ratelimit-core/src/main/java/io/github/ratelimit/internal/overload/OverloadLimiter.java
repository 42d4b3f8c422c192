package io.github.ratelimit.internal.overload;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.Objects;
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
 */
public final class OverloadLimiter {

	private static final int PRIORITIES = RequestPriority.values().length;

	private final AdaptiveLimit algorithm;

	private final double criticalReserve;

	private final double normalReserve;

	private final boolean shadow;

	private final LongSupplier ticker;

	private final AtomicInteger inFlight = new AtomicInteger();

	private final LongAdder[] shed = new LongAdder[PRIORITIES];

	private final ReentrantLock sampling = new ReentrantLock();

	private final LongAdder skippedSamples = new LongAdder();

	/** The ceiling of each priority, by ordinal; replaced whole when the limit changes. */
	private volatile int[] ceilings;

	private OverloadLimiter(Builder builder) {
		this.algorithm = builder.algorithm;
		this.criticalReserve = builder.criticalReserve;
		this.normalReserve = builder.normalReserve;
		this.shadow = builder.shadow;
		this.ticker = builder.ticker;
		this.ceilings = ceilings(Math.max(1, this.algorithm.limit()));
		for (int i = 0; i < PRIORITIES; i++) {
			this.shed[i] = new LongAdder();
		}
	}

	/**
	 * Starts a limiter.
	 * @param algorithm the algorithm that learns the limit
	 * @return a builder
	 */
	public static Builder builder(AdaptiveLimit algorithm) {
		return new Builder(algorithm);
	}

	/**
	 * Admits a call, or turns it away. In shadow mode every call is admitted, and those
	 * that would have been turned away say so.
	 * @param priority the call's priority
	 * @return the permit of an admitted call, to be released when the call ends, or
	 * {@link Permit#SHED} when the call must be turned away
	 */
	public Permit tryAcquire(RequestPriority priority) {
		int ceiling = this.ceilings[priority.ordinal()];
		while (true) {
			int current = this.inFlight.get();
			if (current >= ceiling) {
				this.shed[priority.ordinal()].increment();
				if (!this.shadow) {
					return Permit.SHED;
				}
				return new Permit(this, this.inFlight.incrementAndGet(), ceiling, true);
			}
			if (this.inFlight.compareAndSet(current, current + 1)) {
				return new Permit(this, current + 1, ceiling, false);
			}
		}
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
		return this.shed[priority.ordinal()].sum();
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
		this.inFlight.decrementAndGet();
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

	/** Settings of a limiter. */
	public static final class Builder {

		private final AdaptiveLimit algorithm;

		private double criticalReserve = 0.2;

		private double normalReserve = 0.1;

		private boolean shadow;

		private LongSupplier ticker = System::nanoTime;

		private Builder(AdaptiveLimit algorithm) {
			this.algorithm = algorithm;
		}

		/**
		 * The shares of the limit kept for higher priorities.
		 * @param critical the share only critical calls may fill
		 * @param normal the further share only normal and critical calls may fill
		 * @return this builder
		 */
		public Builder reserves(double critical, double normal) {
			if (!(critical >= 0 && critical < 1)) {
				throw new IllegalArgumentException("critical-reserve must be at least 0 and below 1: " + critical);
			}
			if (!(normal >= 0 && critical + normal < 1)) {
				throw new IllegalArgumentException("normal-reserve must be at least 0 and leave a share for "
						+ "sheddable calls with critical-reserve (" + critical + "): " + normal);
			}
			this.criticalReserve = critical;
			this.normalReserve = normal;
			return this;
		}

		/**
		 * Whether calls over the limit are admitted and only counted.
		 * @param shadow whether to run in shadow mode
		 * @return this builder
		 */
		public Builder shadow(boolean shadow) {
			this.shadow = shadow;
			return this;
		}

		/**
		 * The ticker that times calls.
		 * @param ticker nanoseconds from an arbitrary origin
		 * @return this builder
		 */
		public Builder ticker(LongSupplier ticker) {
			this.ticker = Objects.requireNonNull(ticker, "ticker");
			return this;
		}

		/**
		 * Builds the limiter.
		 * @return the limiter
		 */
		public OverloadLimiter build() {
			return new OverloadLimiter(this);
		}

	}

}
