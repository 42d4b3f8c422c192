package io.github.ratelimit.core;

import io.github.ratelimit.Algorithm;

/**
 * Counter per window of length {@code period}, windows aligned to the epoch.
 */
final class FixedWindow implements BucketState {

	private long windowStart = Long.MIN_VALUE;

	private long count;

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
		long period = limit.periodMicros();
		long window = now - Math.floorMod(now, period);
		long used = (this.windowStart == window) ? this.count : 0;
		long untilEnd = window + period - now;
		if (used + cost <= limit.capacity()) {
			into.set(limit, true, limit.capacity() - used - cost, untilEnd, 0, 0);
		}
		else {
			into.set(limit, false, Math.max(0, limit.capacity() - used), untilEnd, untilEnd, 0);
		}
	}

	@Override
	public void commit(RateLimit limit, long now, long cost) {
		long window = now - Math.floorMod(now, limit.periodMicros());
		if (this.windowStart != window) {
			this.windowStart = window;
			this.count = 0;
		}
		this.count += cost;
	}

	@Override
	public void refund(RateLimit limit, long timestamp, long cost) {
		long window = timestamp - Math.floorMod(timestamp, limit.periodMicros());
		if (this.windowStart == window) {
			this.count = Math.max(0, this.count - cost);
		}
	}

}
