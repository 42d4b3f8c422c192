package io.github.ratelimit.internal.core;

import io.github.ratelimit.store.RateLimit;
import io.github.ratelimit.store.RateLimitDecision;

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
