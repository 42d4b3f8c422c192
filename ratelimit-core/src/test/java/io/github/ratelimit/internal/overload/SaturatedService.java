package io.github.ratelimit.internal.overload;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.PriorityQueue;
import java.util.SplittableRandom;

import io.github.ratelimit.RequestPriority;
import io.github.ratelimit.internal.overload.OverloadLimiter.Outcome;

/**
 * A discrete-event simulation, in virtual time, of a service behind an
 * {@link OverloadLimiter}. Up to {@code knee} calls in flight each take the base latency;
 * past the knee the service shares itself among them (processor sharing), so a call takes
 * {@code base × inFlight / knee}: the throughput stays at {@code knee / base} and only the
 * latency grows. Arrivals are Poisson, a share of them critical and the rest sheddable;
 * each call's latency varies by up to 10% more. Everything is drawn from one seed, so a run
 * is the same every time. With a critical wait, critical calls wait for a place in virtual
 * time too: the limiter's timer is the simulation's.
 */
final class SaturatedService {

	static final long MILLIS = 1_000_000L;

	private static final long TRACE_NANOS = 100 * MILLIS;

	private final int knee;

	private long baseNanos;

	private Outcome outcome = Outcome.SUCCEEDED;

	private final double criticalShare;

	private final SplittableRandom random = new SplittableRandom(33);

	private final PriorityQueue<Event> events = new PriorityQueue<>();

	private long sequence;

	private final AdaptiveLimit algorithm;

	private OverloadLimiter limiter;

	private final Duration initialBase;

	private long now;

	private long stallEveryNanos;

	private long stallNanos;

	SaturatedService(AdaptiveLimit algorithm, int knee, Duration base, double criticalShare) {
		this.knee = knee;
		this.initialBase = base;
		this.baseNanos = base.toNanos();
		this.criticalShare = criticalShare;
		this.algorithm = algorithm;
		this.limiter = OverloadLimiter.builder(algorithm).ticker(() -> this.now).build();
	}

	/**
	 * Lets critical calls wait for a place; to be set before the first run.
	 */
	SaturatedService criticalWait(Duration wait) {
		this.limiter = OverloadLimiter.builder(this.algorithm)
			.ticker(() -> this.now)
			.criticalWait(wait)
			.timer((task, delayNanos) -> schedule(this.now + delayNanos, task))
			.build();
		return this;
	}

	private Runnable schedule(long at, Runnable action) {
		Event event = new Event(afterStall(at), this.sequence++, action);
		this.events.add(event);
		return () -> event.cancelled = true;
	}

	OverloadLimiter limiter() {
		return this.limiter;
	}

	/**
	 * Stalls the service (a collector's pause, a starved processor) for a length of time
	 * every period: calls keep arriving and the dependency keeps working, but nothing the
	 * service does (admitting, releasing, a wait's timer) happens until the stall ends,
	 * and then all at once, in the order it was due.
	 */
	SaturatedService stalls(Duration every, Duration length) {
		this.stallEveryNanos = every.toNanos();
		this.stallNanos = length.toNanos();
		return this;
	}

	/** When something due at a time happens: at the end of the stall it falls in, if any. */
	private long afterStall(long at) {
		if (this.stallEveryNanos <= 0) {
			return at;
		}
		long into = Math.floorMod(at, this.stallEveryNanos);
		return (into < this.stallNanos) ? at + (this.stallNanos - into) : at;
	}

	/**
	 * Changes how long a call takes without load from now on; the knee stays.
	 */
	void base(Duration base) {
		this.baseNanos = base.toNanos();
	}

	/**
	 * Changes how calls end from now on, say {@link Outcome#DROPPED} for an outage that
	 * answers 5xx.
	 */
	void outcome(Outcome outcome) {
		this.outcome = outcome;
	}

	/**
	 * Calls per second the service completes when saturated, at a base latency.
	 */
	double capacity(Duration base) {
		return this.knee * 1e9 / base.toNanos();
	}

	/**
	 * Offers a load for a while.
	 * @param load the arrival rate as a multiple of the capacity at the initial base
	 * latency
	 * @param length how long, in virtual time
	 * @return what happened
	 */
	Phase run(double load, Duration length) {
		double meanGapNanos = 1e9 / (capacity(this.initialBase) * load);
		long start = this.now;
		long end = start + length.toNanos();
		// when the next call reaches the socket; the service sees it when it is not stalled
		long nextArrival = start + gap(meanGapNanos);
		long nextTrace = start;
		Phase phase = new Phase(start);
		while (true) {
			Event first = this.events.peek();
			long seen = afterStall(nextArrival);
			long next = (first != null && first.at <= seen) ? first.at : seen;
			while (nextTrace <= Math.min(next, end)) {
				phase.trace(nextTrace, this.limiter.limit());
				nextTrace += TRACE_NANOS;
			}
			if (next > end) {
				break;
			}
			this.now = next;
			if (first != null && first.at == next) {
				Event event = this.events.poll();
				if (!event.cancelled) {
					event.action.run();
				}
			}
			else {
				arrive(phase);
				nextArrival += gap(meanGapNanos);
			}
		}
		this.now = end;
		return phase;
	}

	private void arrive(Phase phase) {
		RequestPriority priority = (this.random.nextDouble() < this.criticalShare) ? RequestPriority.CRITICAL
				: RequestPriority.SHEDDABLE;
		phase.offered[priority.ordinal()]++;
		this.limiter.acquireAsync(priority).thenAccept((permit) -> {
			if (permit.shed()) {
				return;
			}
			phase.admitted[priority.ordinal()]++;
			int inFlight = this.limiter.inFlight();
			double latency = this.baseNanos * Math.max(1.0, (double) inFlight / this.knee)
					* (1 + 0.1 * this.random.nextDouble());
			schedule(this.now + (long) latency, () -> permit.release(this.outcome));
		});
	}

	private long gap(double meanNanos) {
		return Math.max(1, (long) (-meanNanos * Math.log(1 - this.random.nextDouble())));
	}

	/** Something that happens at a moment of virtual time; ties in the order they were scheduled. */
	private static final class Event implements Comparable<Event> {

		final long at;

		final long sequence;

		final Runnable action;

		boolean cancelled;

		Event(long at, long sequence, Runnable action) {
			this.at = at;
			this.sequence = sequence;
			this.action = action;
		}

		@Override
		public int compareTo(Event other) {
			int byTime = Long.compare(this.at, other.at);
			return (byTime != 0) ? byTime : Long.compare(this.sequence, other.sequence);
		}

	}

	/**
	 * What happened in one phase: calls offered and admitted by priority, and the limit
	 * every 100 ms of virtual time.
	 */
	static final class Phase {

		private final long start;

		final long[] offered = new long[RequestPriority.values().length];

		final long[] admitted = new long[RequestPriority.values().length];

		private final List<long[]> trace = new ArrayList<>();

		Phase(long start) {
			this.start = start;
		}

		void trace(long at, int limit) {
			this.trace.add(new long[] { at - this.start, limit });
		}

		double admittedShare(RequestPriority priority) {
			long offered = this.offered[priority.ordinal()];
			return (offered == 0) ? 1.0 : (double) this.admitted[priority.ordinal()] / offered;
		}

		/**
		 * The lowest and highest limit traced from some time into the phase on.
		 */
		int[] limitRange(Duration from) {
			int min = Integer.MAX_VALUE;
			int max = 0;
			for (long[] point : this.trace) {
				if (point[0] >= from.toNanos()) {
					min = Math.min(min, (int) point[1]);
					max = Math.max(max, (int) point[1]);
				}
			}
			return new int[] { min, max };
		}

		double meanLimit(Duration from) {
			return this.trace.stream().filter((point) -> point[0] >= from.toNanos()).mapToLong((point) -> point[1])
				.average().orElse(0);
		}

		/**
		 * How long into the phase the limit first reached a level, or {@code null} if never.
		 */
		Duration reached(double level) {
			for (long[] point : this.trace) {
				if (point[1] >= level) {
					return Duration.ofNanos(point[0]);
				}
			}
			return null;
		}

		/**
		 * How long into the phase the limit first reached a level again after its lowest
		 * point, or {@code null} if never.
		 */
		Duration reachedAfterLowest(double level) {
			int lowest = 0;
			for (int i = 0; i < this.trace.size(); i++) {
				if (this.trace.get(i)[1] < this.trace.get(lowest)[1]) {
					lowest = i;
				}
			}
			for (long[] point : this.trace.subList(lowest, this.trace.size())) {
				if (point[1] >= level) {
					return Duration.ofNanos(point[0]);
				}
			}
			return null;
		}

		@Override
		public String toString() {
			int[] range = limitRange(Duration.ZERO);
			return String.format("limit %d..%d, critical %.2f%%, sheddable %.2f%% admitted", range[0], range[1],
					100 * admittedShare(RequestPriority.CRITICAL), 100 * admittedShare(RequestPriority.SHEDDABLE));
		}

	}

}
