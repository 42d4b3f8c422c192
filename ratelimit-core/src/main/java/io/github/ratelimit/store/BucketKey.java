package io.github.ratelimit.store;

import java.util.Objects;

/**
 * Identifies one bucket: a limit name and an identity.
 *
 * @param limitName the limit name
 * @param identity the identity
 */
public record BucketKey(String limitName, String identity) implements Comparable<BucketKey> {

	public BucketKey {
		Objects.requireNonNull(limitName, "limitName must not be null");
		Objects.requireNonNull(identity, "identity must not be null");
	}

	@Override
	public int compareTo(BucketKey other) {
		int byName = this.limitName.compareTo(other.limitName);
		return (byName != 0) ? byName : this.identity.compareTo(other.identity);
	}

}
