package io.github.ratelimit.memory;

import java.util.Arrays;

import io.github.ratelimit.core.BucketState;
import io.github.ratelimit.core.RateLimit;

/**
 * One bucket of the in-memory store: its key (a limit name and an identity), the state of
 * its algorithm and the latest time it decided at. The key never changes and may be read
 * without a lock; everything else is guarded by the bucket's own monitor.
 * <p>
 * Kept small, since the store holds one per identity and limit: the identity is kept as
 * its bytes when it is ASCII (what {@link io.github.ratelimit.core.Identities} produces),
 * which saves the string object around them, and the limit name is read from the limit.
 */
final class Bucket {

	/** The key's hash in its table. */
	final int hash;

	/** The identity: its characters as bytes when all are ASCII, otherwise the string itself. */
	private final Object identity;

	/**
	 * The limit that decided last. Every limit a bucket sees has the bucket's name, so
	 * reading its name needs no lock.
	 */
	RateLimit limit;

	/** The algorithm's state. */
	BucketState state;

	/** Latest time this bucket decided at. */
	long lastMicros = Long.MIN_VALUE;

	/** Whether the bucket has left its table; a request that finds it so looks it up again. */
	boolean removed;

	/**
	 * Creates a bucket with a fresh state (a whole quota).
	 * @param hash the key's hash
	 * @param limit the limit
	 * @param identity the identity
	 */
	Bucket(int hash, RateLimit limit, String identity) {
		this.hash = hash;
		this.identity = compact(identity);
		this.limit = limit;
		this.state = BucketState.create(limit);
	}

	/**
	 * Whether this bucket has the given key.
	 * @param name the limit name
	 * @param identity the identity
	 * @return whether both match
	 */
	boolean matches(String name, String identity) {
		String own = this.limit.name();
		if (own != name && !own.equals(name)) {
			return false;
		}
		if (this.identity instanceof byte[] bytes) {
			if (bytes.length != identity.length()) {
				return false;
			}
			for (int i = 0; i < bytes.length; i++) {
				// a character beyond ASCII never equals a stored (ASCII) byte
				if (bytes[i] != identity.charAt(i)) {
					return false;
				}
			}
			return true;
		}
		return this.identity.equals(identity);
	}

	/**
	 * Whether another bucket has this bucket's key.
	 * @param other the other bucket
	 * @return whether their limit names and identities are equal
	 */
	boolean sameKey(Bucket other) {
		if (!this.limit.name().equals(other.limit.name())) {
			return false;
		}
		if (this.identity instanceof byte[] bytes) {
			// an identity is kept as bytes exactly when it is ASCII, so bytes never equal a string
			return other.identity instanceof byte[] otherBytes && Arrays.equals(bytes, otherBytes);
		}
		return this.identity.equals(other.identity);
	}

	/**
	 * The time to decide at: {@code now}, unless this bucket has already seen a later time.
	 * @param now the clock's time
	 * @return the time to decide at
	 */
	long advanceTo(long now) {
		this.lastMicros = Math.max(this.lastMicros, now);
		return this.lastMicros;
	}

	/**
	 * The state for a limit of this bucket, which becomes the limit that decided last; a
	 * changed algorithm starts afresh.
	 * @param limit the limit
	 * @return the state
	 */
	BucketState stateFor(RateLimit limit) {
		if (this.state.algorithm() != limit.algorithm()) {
			this.state = BucketState.create(limit);
		}
		this.limit = limit;
		return this.state;
	}

	private static Object compact(String identity) {
		byte[] bytes = new byte[identity.length()];
		for (int i = 0; i < bytes.length; i++) {
			char c = identity.charAt(i);
			if (c >= 0x80) {
				return identity;
			}
			bytes[i] = (byte) c;
		}
		return bytes;
	}

}
