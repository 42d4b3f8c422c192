package io.github.ratelimit.internal.overload;

/**
 * Additive increase, multiplicative decrease: the limit grows by one for each call that
 * ends well while the limit is in use, and shrinks by a factor for each call that signals
 * overload (a failure, or a call slower than the latency threshold).
 */
final class AimdLimit implements AdaptiveLimit {

	private final LimitBounds bounds;

	private final double backoff;

	private final long slowNanos;

	private double limit;

	AimdLimit(LimitBounds bounds, double backoff, long slowNanos) {
		if (!(backoff > 0 && backoff < 1)) {
			throw new IllegalArgumentException("backoff must be between 0 and 1: " + backoff);
		}
		this.bounds = bounds;
		this.backoff = backoff;
		this.slowNanos = slowNanos;
		this.limit = bounds.initial();
	}

	@Override
	public int limit() {
		return (int) this.limit;
	}

	@Override
	public void onSample(long startNanos, long rttNanos, int inFlight, boolean dropped) {
		if (dropped || (this.slowNanos > 0 && rttNanos > this.slowNanos)) {
			this.limit = this.bounds.clamp(this.limit * this.backoff);
		}
		else if (inFlight * 2 >= this.limit) {
			// grow only while the limit is in use: an idle service learns nothing about its capacity
			this.limit = this.bounds.clamp(this.limit + 1);
		}
	}

}
