package io.github.ratelimit.internal.core;

import io.github.ratelimit.store.RateLimitResult;
import io.github.ratelimit.store.RateLimitStore;

/**
 * What a grant call decided: the decisions of the costs, all or nothing as
 * {@link RateLimitStore#tryAcquire} decides them, and the units taken beyond each cost.
 *
 * @param result the decisions, in the order of the requests, with the store's time
 * @param extra per request, the units taken beyond its cost: 0 for every request when the
 * costs were rejected
 */
public record ShareGrant(RateLimitResult result, long[] extra) {

	public ShareGrant {
		if (extra.length != result.decisions().size()) {
			throw new IllegalArgumentException(
					"one extra per decision: " + extra.length + " for " + result.decisions().size());
		}
	}

}
