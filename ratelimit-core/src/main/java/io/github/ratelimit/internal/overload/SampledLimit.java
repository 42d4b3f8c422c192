package io.github.ratelimit.internal.overload;

/**
 * What the adaptive limits share: a slow call counts as a drop, a drop shrinks the limit
 * by a factor at most once per round trip, and only a limit in use may grow.
 * <p>
 * Once per round trip: a drop of a call that started before the last decrease was already
 * in flight under the old limit, so it says nothing new and is ignored. Without this rule
 * one burst of failures (every call of one round trip) would shrink the limit once per
 * call, to its minimum. TCP treats losses within one window the same way.
 * <p>
 * In use: a call started while fewer than half of its priority's ceiling were in flight
 * shows a service that is not using its limit, so its latency says nothing about
 * whether a higher limit would fit. Judging against the ceiling rather than the whole
 * limit lets a service that only receives sheddable calls (which stop at their share of
 * the limit) still grow it.
 */
abstract class SampledLimit implements AdaptiveLimit {

	final LimitBounds bounds;

	private final double backoff;

	private final long slowNanos;

	double limit;

	private boolean decreased;

	private long lastDecreaseNanos;

	SampledLimit(LimitBounds bounds, double backoff, long slowNanos) {
		if (!(backoff > 0 && backoff < 1)) {
			throw new IllegalArgumentException("backoff must be between 0 and 1: " + backoff);
		}
		if (slowNanos < 0) {
			throw new IllegalArgumentException("slow-call must not be negative: " + slowNanos + "ns");
		}
		this.bounds = bounds;
		this.backoff = backoff;
		this.slowNanos = slowNanos;
		this.limit = bounds.initial();
	}

	@Override
	public final int limit() {
		return (int) this.limit;
	}

	@Override
	public final void onSample(long startNanos, long rttNanos, int inFlight, boolean dropped) {
		onSample(startNanos, rttNanos, inFlight, limit(), dropped);
	}

	@Override
	public final void onSample(long startNanos, long rttNanos, int inFlight, int ceiling, boolean dropped) {
		if (dropped || (this.slowNanos > 0 && rttNanos > this.slowNanos)) {
			backOff(startNanos, rttNanos);
		}
		else {
			learn(startNanos, Math.max(1, rttNanos), Math.max(1, inFlight), inFlight * 2 >= ceiling);
		}
	}

	private void backOff(long startNanos, long rttNanos) {
		if (this.decreased && startNanos - this.lastDecreaseNanos < 0) {
			return;
		}
		this.limit = this.bounds.clamp(this.limit * this.backoff);
		this.lastDecreaseNanos = startNanos + rttNanos;
		this.decreased = true;
	}

	/**
	 * Learns from a call that ended well and fast enough.
	 * @param startNanos when the call started
	 * @param rttNanos how long it took, at least 1
	 * @param inFlight the calls in flight when it started, at least 1
	 * @param inUse whether the limit was in use for the call's priority
	 */
	abstract void learn(long startNanos, long rttNanos, int inFlight, boolean inUse);

}
