package io.github.ratelimit.internal.memory;

import java.util.Arrays;

import io.github.ratelimit.internal.core.BucketState;
import io.github.ratelimit.store.RateLimit;

/**
 * One bucket of the in-memory store: its key (a limit name and an identity), the state of
 * its algorithm and the latest time it decided at. The key never changes and may be read
 * without a lock; everything else is guarded by the bucket's own monitor.
 * <p>
 * Kept small, since the store holds one per identity and limit: the identity is kept as
 * its bytes when it is ASCII (what {@link io.github.ratelimit.internal.core.Identities} produces),
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

	/**
	 * What the latest decision left, for ranking buckets without reading their state: how
	 * much of the quota is in use ({@link #level}, in the top bits) and, as a
	 * {@link #timeCode}, how long after {@link #lastMicros} more quota comes. Until then
	 * the quota in use does not change, unless a request changes it (and writes this).
	 */
	short rank;

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
		if (this.limit != limit) {
			this.limit = limit;
		}
		return this.state;
	}

	/** Level of a whole quota: the same as no bucket. */
	static final int WHOLE = 0;

	/** Level of a used-up quota, above every partly used one. */
	static final int USED_UP = 5;

	/** Number of distinct ranks: levels times time codes. */
	static final int RANKS = (USED_UP + 1) << 12;

	/**
	 * Remembers what a decision at {@link #lastMicros} (or later) left in the bucket.
	 * @param at the time of the decision
	 * @param available quota units left
	 * @param capacity the limit's capacity
	 * @param resetMicros time after {@code at} until more quota becomes available
	 */
	void remember(long at, long available, long capacity, long resetMicros) {
		this.rank = (short) ((level(available, capacity) << 12) | timeCode(at - this.lastMicros + resetMicros));
	}

	/**
	 * The rank this bucket had at its latest decision, seen at {@code now}: its level, then
	 * the time until more quota comes. Exact while no quota has come back since.
	 * @param now the time of the ranking
	 * @return the rank, or -1 when quota may have come back (or the quota was whole), so
	 * that only the state can tell
	 */
	int rankAt(long now) {
		int rank = this.rank;
		int level = rank >>> 12;
		long more = this.lastMicros + timeOf(rank & 0xFFF);
		if (level == WHOLE || now >= more) {
			return -1;
		}
		return (level << 12) | timeCode(more - now);
	}

	/**
	 * How much of a quota is in use: {@link #WHOLE}, then 1 to 4 for less than a quarter,
	 * less than half, less than three quarters and less than all of it, then
	 * {@link #USED_UP}.
	 */
	static int level(long available, long capacity) {
		if (available >= capacity) {
			return WHOLE;
		}
		if (available <= 0) {
			return USED_UP;
		}
		long used = (capacity - available) * 4;
		return 1 + ((used >= capacity) ? 1 : 0) + ((used >= 2 * capacity) ? 1 : 0) + ((used >= 3 * capacity) ? 1 : 0);
	}

	/**
	 * A duration in 12 bits, rounded down, keeping the order of durations: exact below
	 * 64µs, then six significant bits.
	 * @param micros the duration
	 * @return the code
	 */
	static int timeCode(long micros) {
		if (micros < 64) {
			return (int) Math.max(0, micros);
		}
		// beyond a thousand years every duration is alike
		long bounded = Math.min(micros, 1L << 55);
		int exponent = 63 - Long.numberOfLeadingZeros(bounded);
		return ((exponent - 5) << 6) | (int) ((bounded >>> (exponent - 6)) & 63);
	}

	/**
	 * The shortest duration with a code.
	 * @param code the code
	 * @return microseconds
	 */
	static long timeOf(int code) {
		if (code < 64) {
			return code;
		}
		return (64L | (code & 63)) << ((code >>> 6) - 1);
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
