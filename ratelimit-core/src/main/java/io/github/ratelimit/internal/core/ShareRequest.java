package io.github.ratelimit.internal.core;

import java.util.Objects;

import io.github.ratelimit.store.BucketKey;
import io.github.ratelimit.store.RateLimit;

/**
 * One limit's part of a grant call: an acquisition whose cost may be 0, and how many more
 * units an instance asks to take for spending locally, granted as far as the bucket has
 * them.
 *
 * @param limit the limit; its algorithm must be {@link AlgorithmSpec#shareable() shareable}
 * @param identity the identity owning the bucket, already normalised and bounded
 * @param cost units the request itself takes, all or nothing; 0 when a share is only
 * refreshed
 * @param extra units wanted beyond the cost, granted in part when fewer are left
 */
public record ShareRequest(RateLimit limit, String identity, long cost, long extra) {

	public ShareRequest {
		Objects.requireNonNull(limit, "limit must not be null");
		Objects.requireNonNull(identity, "identity must not be null");
		if (cost < 0 || extra < 0) {
			throw new IllegalArgumentException("cost and extra must not be negative: " + cost + ", " + extra);
		}
		if (cost > limit.capacity()) {
			throw new IllegalArgumentException(
					"cost " + cost + " exceeds the capacity " + limit.capacity() + " of limit '" + limit.name() + "'");
		}
		if (!AlgorithmSpec.of(limit.algorithm()).shareable()) {
			throw new IllegalArgumentException(
					"limit '" + limit.name() + "' (" + limit.algorithm() + ") cannot be shared");
		}
	}

	/**
	 * The bucket this request takes from.
	 * @return the key
	 */
	public BucketKey key() {
		return new BucketKey(this.limit.name(), this.identity);
	}

}
