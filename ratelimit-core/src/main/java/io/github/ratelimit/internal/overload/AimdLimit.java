package io.github.ratelimit.internal.overload;

/**
 * Additive increase, multiplicative decrease (Jacobson 1988): the limit grows by one for
 * each call that ends well while the limit is in use, and shrinks by a factor, at most
 * once per round trip, when a call signals overload (a failure, or a call slower than the
 * latency threshold). Latency below the threshold is not read.
 */
final class AimdLimit extends SampledLimit {

	AimdLimit(LimitBounds bounds, double backoff, long slowNanos) {
		super(bounds, backoff, slowNanos);
	}

	@Override
	void learn(long startNanos, long rttNanos, int inFlight, boolean inUse) {
		if (inUse) {
			this.limit = this.bounds.clamp(this.limit + 1);
		}
	}

}
