package io.github.ratelimit.store;

import java.util.Objects;

/**
 * The state of one bucket as read by {@link RateLimitStore#inspect}, without consuming
 * anything: what a request of cost 1 would find now.
 *
 * @param limit the limit, as the store that answered enforces it
 * @param identity the identity owning the bucket
 * @param exists whether the store holds state for the bucket; a bucket without state has
 * its whole quota
 * @param remaining quota units available now
 * @param resetMicros time until more quota becomes available, as a response to a request
 * of cost 1 would advertise it
 * @param retryAfterMicros time until a request of cost 1 would be admitted; 0 when it
 * would be admitted now
 * @param store which store answered: {@code memory}, {@code redis} or {@code fallback}
 */
public record BucketSnapshot(RateLimit limit, String identity, boolean exists, long remaining, long resetMicros,
		long retryAfterMicros, String store) {

	public BucketSnapshot {
		Objects.requireNonNull(limit, "limit must not be null");
		Objects.requireNonNull(identity, "identity must not be null");
		if (remaining < 0 || remaining > limit.capacity()) {
			throw new IllegalArgumentException("remaining must be between 0 and the capacity: " + remaining);
		}
	}

	/**
	 * The snapshot a store reads from the decision of a request of cost 1 it did not
	 * commit.
	 * @param probe the uncommitted decision
	 * @param identity the identity
	 * @param exists whether the bucket has state
	 * @param store the store name
	 * @return the snapshot
	 */
	public static BucketSnapshot of(RateLimitDecision probe, String identity, boolean exists, String store) {
		RateLimitDecision before = probe.uncommitted(1);
		// a whole quota has nothing to wait for, whether the bucket is fresh or refilled
		long reset = (before.remaining() == probe.limit().capacity()) ? 0 : before.resetMicros();
		return new BucketSnapshot(probe.limit(), identity, exists, before.remaining(), reset,
				probe.retryAfterMicros(), store);
	}

	/**
	 * This snapshot as answered by another store.
	 * @param name the store name
	 * @return the snapshot
	 */
	public BucketSnapshot answeredBy(String name) {
		return new BucketSnapshot(this.limit, this.identity, this.exists, this.remaining, this.resetMicros,
				this.retryAfterMicros, name);
	}

}
