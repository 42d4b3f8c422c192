package io.github.ratelimit.internal.core;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.store.MutableDecision;
import io.github.ratelimit.store.RateLimit;
import io.github.ratelimit.store.RateLimitDecision;

/**
 * Counters of the current and previous epoch-aligned windows; a request of cost k is
 * admitted when {@code curr + prev·(1 − elapsed/P) + k ≤ C}. Computed as
 * {@code (curr + k)·P + prev·(P − elapsed) ≤ C·P} in doubles, exact for every value below
 * 2^53 and computed the same way by every store.
 */
final class SlidingWindowCounter implements BucketState {

	private long windowStart = Long.MIN_VALUE;

	private long current;

	private long previous;

	/** An empty state: no window counted yet. */
	SlidingWindowCounter() {
	}

	/** A state restored from its fields, as {@link BucketStateCodec} reads them. */
	SlidingWindowCounter(long windowStart, long current, long previous) {
		this.windowStart = windowStart;
		this.current = current;
		this.previous = previous;
	}

	long windowStart() {
		return this.windowStart;
	}

	long current() {
		return this.current;
	}

	long previous() {
		return this.previous;
	}

	@Override
	public Algorithm algorithm() {
		return Algorithm.SLIDING_WINDOW_COUNTER;
	}

	@Override
	public RateLimitDecision check(RateLimit limit, long now, long cost) {
		MutableDecision decision = new MutableDecision();
		check(limit, now, cost, 0, decision);
		return decision.toDecision();
	}

	@Override
	public void check(RateLimit limit, long now, long cost, long maxDelay, MutableDecision into) {
		long period = limit.periodMicros();
		long window = now - Math.floorMod(now, period);
		long curr = currentAt(window, period);
		long prev = previousAt(window, period);
		double p = period;
		double elapsed = now - window;
		double capacity = limit.capacity();
		double prevWeight = prev * (p - elapsed);
		if ((curr + cost) * p + prevWeight <= capacity * p) {
			long after = curr + cost;
			double free = capacity * p - after * p - prevWeight;
			long remaining = (long) Math.floor(free / p);
			into.set(limit, true, remaining, untilMore(free, remaining, after, prev, p, elapsed, capacity), 0, 0);
			return;
		}
		double free = capacity * p - curr * p - prevWeight;
		long remaining = Math.max(0, (long) Math.floor(free / p));
		double wait;
		if (curr + cost <= limit.capacity()) {
			// the previous window still weighs too much: wait until it has decayed enough
			wait = p - Math.floor((capacity - curr - cost) * p / prev) - elapsed;
		}
		else {
			// wait for the next window, where this window becomes the previous one
			double next = (curr == 0) ? 0 : Math.max(0, p - Math.floor((capacity - cost) * p / curr));
			wait = (p - elapsed) + next;
		}
		into.set(limit, false, remaining, untilMore(free, remaining, curr, prev, p, elapsed, capacity),
				(long) wait, 0);
	}

	/** Time until at least one more unit of quota is available. */
	private static long untilMore(double free, long remaining, long curr, long prev, double p, double elapsed,
			double capacity) {
		if (remaining >= capacity) {
			return 0;
		}
		double target = (remaining + 1) * p;
		if (prev > 0) {
			double within = Math.ceil((target - free) / prev);
			if (elapsed + within <= p) {
				return (long) within;
			}
		}
		if (curr == 0) {
			return (long) (p - elapsed);
		}
		double next = Math.max(0, Math.ceil((target - capacity * p + curr * p) / curr));
		return (long) ((p - elapsed) + next);
	}

	@Override
	public void commit(RateLimit limit, long now, long cost) {
		long period = limit.periodMicros();
		long window = now - Math.floorMod(now, period);
		long curr = currentAt(window, period);
		this.previous = previousAt(window, period);
		this.current = curr + cost;
		this.windowStart = window;
	}

	@Override
	public void refund(RateLimit limit, long timestamp, long cost) {
		long period = limit.periodMicros();
		long window = timestamp - Math.floorMod(timestamp, period);
		if (this.windowStart == window) {
			this.current = Math.max(0, this.current - cost);
		}
		else if (this.windowStart == window + period) {
			this.previous = Math.max(0, this.previous - cost);
		}
	}

	private long currentAt(long window, long period) {
		return (this.windowStart == window) ? this.current : 0;
	}

	private long previousAt(long window, long period) {
		if (this.windowStart == window) {
			return this.previous;
		}
		return (this.windowStart == window - period) ? this.current : 0;
	}

}
