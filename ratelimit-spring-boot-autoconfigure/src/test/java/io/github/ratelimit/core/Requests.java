package io.github.ratelimit.core;

/**
 * Drives a {@link BucketState} the way a store does: check, and commit only what was
 * allowed.
 */
final class Requests {

	private Requests() {
	}

	static RateLimitDecision acquire(BucketState state, RateLimit limit, long nowMicros, long cost) {
		RateLimitDecision decision = state.check(limit, nowMicros, cost);
		if (decision.allowed()) {
			state.commit(limit, nowMicros, cost);
		}
		return decision;
	}

}
