package io.github.ratelimit.internal.overload;

import java.util.concurrent.TimeUnit;

/**
 * A gradient of latency, after Netflix's Gradient2: the ratio of a long-term, smoothed
 * latency to the latency of the call that just ended, with a tolerance of 1.5 (a call
 * up to 50% slower than usual is not a sign of queueing), clamped to {@code [0.5, 1]}.
 * The limit moves towards {@code limit × gradient + queueSize}: it grows by
 * {@code queueSize = 4} while latency stays within the tolerance and shrinks by up to a
 * half when it does not. A drop shrinks it by 10%.
 * <p>
 * The long-term latency is smoothed over time rather than over a count of calls, with a
 * time constant of 60 seconds, so its meaning does not depend on the traffic; when the
 * latency falls to less than half of it (the end of a long overload) it is also brought
 * down by 5% per call, so the limit does not stay low for the whole time constant. The
 * move towards the target is smoothed by 0.2 per round trip: every call moves the limit
 * by {@code 0.2/inFlight} of the distance.
 * <p>
 * Having no fixed reference, the long-term latency also follows a queue that lasts: under
 * a saturation that lasts, the limit creeps up by about {@code (tolerance − 1)} of itself
 * per time constant (below 1% a second). This is why Vegas, which compares with the
 * no-load latency, is the default.
 */
final class Gradient2Limit extends SampledLimit {

	static final double TOLERANCE = 1.5;

	static final double SMOOTHING = 0.2;

	static final long LONG_TERM_NANOS = TimeUnit.SECONDS.toNanos(60);

	private boolean started;

	private double longRtt;

	private long lastEndNanos;

	Gradient2Limit(LimitBounds bounds, long slowNanos) {
		super(bounds, 0.9, slowNanos);
	}

	@Override
	void learn(long startNanos, long rttNanos, int inFlight, boolean inUse) {
		long endNanos = startNanos + rttNanos;
		if (!this.started) {
			this.started = true;
			this.longRtt = rttNanos;
			this.lastEndNanos = endNanos;
		}
		else {
			long elapsed = Math.max(0, endNanos - this.lastEndNanos);
			this.lastEndNanos = Math.max(this.lastEndNanos, endNanos);
			this.longRtt += (rttNanos - this.longRtt) * -Math.expm1(-(double) elapsed / LONG_TERM_NANOS);
		}
		if (this.longRtt > 2.0 * rttNanos) {
			this.longRtt *= 0.95;
		}
		if (!inUse) {
			return;
		}
		double gradient = Math.max(0.5, Math.min(1.0, TOLERANCE * this.longRtt / rttNanos));
		double target = this.limit * gradient + 4;
		this.limit = this.bounds.clamp(this.limit + (target - this.limit) * SMOOTHING / inFlight);
	}

	/**
	 * The long-term latency the gradient compares calls with.
	 */
	double longTermNanos() {
		return this.longRtt;
	}

}
