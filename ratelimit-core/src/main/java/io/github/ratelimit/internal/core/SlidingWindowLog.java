package io.github.ratelimit.internal.core;

import java.util.ArrayDeque;
import java.util.Iterator;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.store.MutableDecision;
import io.github.ratelimit.store.RateLimit;
import io.github.ratelimit.store.RateLimitDecision;

/**
 * Exact log of the admitted requests of the last {@code period}: at most {@code capacity}
 * units in any interval of that length. Rejected requests are not logged, so the log
 * never holds more than {@code capacity} entries, unless settled costs charged beyond
 * the capacity (a debt, which ends when those entries are a period old).
 */
final class SlidingWindowLog implements BucketState {

	/** Admitted requests, oldest first, as pairs (timestamp, cost). */
	private final ArrayDeque<long[]> entries = new ArrayDeque<>();

	private long used;

	/** The admitted requests, oldest first, as pairs (timestamp, cost); not to be changed. */
	Iterable<long[]> entries() {
		return this.entries;
	}

	int size() {
		return this.entries.size();
	}

	/** Appends an admitted request, as {@link BucketStateCodec} restores the log, oldest first. */
	void restore(long timestamp, long cost) {
		this.entries.addLast(new long[] { timestamp, cost });
		this.used += cost;
	}

	@Override
	public Algorithm algorithm() {
		return Algorithm.SLIDING_WINDOW_LOG;
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
		expire(now - period);
		if (this.used + cost <= limit.capacity()) {
			long oldest = this.entries.isEmpty() ? now : this.entries.peekFirst()[0];
			into.set(limit, true, limit.capacity() - this.used - cost, oldest + period - now, 0, 0);
			return;
		}
		long remaining = Math.max(0, limit.capacity() - this.used);
		into.set(limit, false, remaining, untilFree(remaining + 1, limit, now), untilFree(cost, limit, now), 0);
	}

	/** Time until enough entries have expired for {@code units} to fit. */
	private long untilFree(long units, RateLimit limit, long now) {
		long needed = this.used + units - limit.capacity();
		long freed = 0;
		for (long[] entry : this.entries) {
			freed += entry[1];
			if (freed >= needed) {
				return entry[0] + limit.periodMicros() - now;
			}
		}
		throw new IllegalStateException("cost " + units + " exceeds capacity " + limit.capacity());
	}

	@Override
	public void commit(RateLimit limit, long now, long cost) {
		this.entries.addLast(new long[] { now, cost });
		this.used += cost;
	}

	@Override
	public void refund(RateLimit limit, long timestamp, long cost) {
		Iterator<long[]> newestFirst = this.entries.descendingIterator();
		while (newestFirst.hasNext()) {
			long[] entry = newestFirst.next();
			if (entry[0] == timestamp && entry[1] == cost) {
				newestFirst.remove();
				this.used -= cost;
				return;
			}
		}
	}

	/**
	 * A charge is logged at the time of the settlement, as a request admitted then: the
	 * units used count for a whole period from the moment they are known, and the log stays
	 * in time order. A give-back shrinks the reservation's own entry, as a refund removes
	 * it, unless that entry has expired.
	 */
	@Override
	public void settle(RateLimit limit, long timestamp, long now, long reserved, long actual) {
		if (actual >= reserved) {
			BucketState.super.settle(limit, timestamp, now, reserved, actual);
			return;
		}
		Iterator<long[]> newestFirst = this.entries.descendingIterator();
		while (newestFirst.hasNext()) {
			long[] entry = newestFirst.next();
			if (entry[0] == timestamp && entry[1] == reserved) {
				this.used -= reserved - actual;
				if (actual == 0) {
					newestFirst.remove();
				}
				else {
					entry[1] = actual;
				}
				return;
			}
		}
	}

	/** Drops entries at or before {@code horizon}: they are a whole period old. */
	private void expire(long horizon) {
		while (!this.entries.isEmpty() && this.entries.peekFirst()[0] <= horizon) {
			this.used -= this.entries.removeFirst()[1];
		}
	}

}
