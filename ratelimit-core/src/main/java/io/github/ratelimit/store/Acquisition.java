package io.github.ratelimit.store;

import java.util.Objects;

/**
 * A request for {@code cost} units of one limit's bucket for one identity.
 *
 * @param limit the limit
 * @param identity the identity owning the bucket, already normalised and bounded
 * @param cost quota units to take
 */
public record Acquisition(RateLimit limit, String identity, long cost) {

	public Acquisition {
		Objects.requireNonNull(limit, "limit must not be null");
		Objects.requireNonNull(identity, "identity must not be null");
		if (cost <= 0) {
			throw new IllegalArgumentException("cost must be positive: " + cost);
		}
		if (cost > limit.capacity()) {
			// no bucket could ever admit it, so there is no retry-after to answer with
			throw new IllegalArgumentException(
					"cost " + cost + " exceeds the capacity " + limit.capacity() + " of limit '" + limit.name() + "'");
		}
	}

	/**
	 * The bucket this acquisition draws from.
	 * @return the bucket key
	 */
	public BucketKey key() {
		return new BucketKey(this.limit.name(), this.identity);
	}

}
