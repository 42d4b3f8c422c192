package io.github.ratelimit.internal.core;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.store.MutableDecision;
import io.github.ratelimit.store.RateLimit;
import io.github.ratelimit.store.RateLimitDecision;

/**
 * Counter per window: of length {@code period} aligned to the epoch, or a calendar day,
 * week or month in the limit's time zone for a calendar quota. The state remembers where
 * its window ends, so that a calendar window's boundaries are computed once per window.
 */
final class FixedWindow implements BucketState {

	private long windowStart = Long.MIN_VALUE;

	private long windowEnd = Long.MIN_VALUE;

	private long count;

	/** An empty state: no window counted yet. */
	FixedWindow() {
	}

	/** A state restored from its fields, as {@link BucketStateCodec} reads them. */
	FixedWindow(long windowStart, long windowEnd, long count) {
		this.windowStart = windowStart;
		this.windowEnd = windowEnd;
		this.count = count;
	}

	long windowStart() {
		return this.windowStart;
	}

	long windowEnd() {
		return this.windowEnd;
	}

	long count() {
		return this.count;
	}

	@Override
	public Algorithm algorithm() {
		return Algorithm.FIXED_WINDOW;
	}

	@Override
	public RateLimitDecision check(RateLimit limit, long now, long cost) {
		MutableDecision decision = new MutableDecision();
		check(limit, now, cost, 0, decision);
		return decision.toDecision();
	}

	@Override
	public void check(RateLimit limit, long now, long cost, long maxDelay, MutableDecision into) {
		long window;
		long end;
		long used;
		if (current(now)) {
			window = this.windowStart;
			end = this.windowEnd;
			used = this.count;
		}
		else {
			window = limit.windowStartMicros(now);
			end = limit.windowEndMicros(window);
			used = 0;
		}
		long untilEnd = end - now;
		if (used + cost <= limit.capacity()) {
			into.set(limit, true, limit.capacity() - used - cost, untilEnd, 0, 0);
		}
		else {
			into.set(limit, false, Math.max(0, limit.capacity() - used), untilEnd, untilEnd, 0);
		}
		if (limit.isCalendar()) {
			into.inWindow(end - window);
		}
	}

	@Override
	public void commit(RateLimit limit, long now, long cost) {
		if (!current(now)) {
			this.windowStart = limit.windowStartMicros(now);
			this.windowEnd = limit.windowEndMicros(this.windowStart);
			this.count = 0;
		}
		this.count += cost;
	}

	@Override
	public void refund(RateLimit limit, long timestamp, long cost) {
		if (current(timestamp)) {
			this.count = Math.max(0, this.count - cost);
		}
	}

	/** Whether an instant falls in the window this state counts. */
	private boolean current(long micros) {
		return micros >= this.windowStart && micros < this.windowEnd;
	}

}
