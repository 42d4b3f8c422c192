package io.github.ratelimit.internal.redis;

import java.nio.charset.StandardCharsets;

import io.github.ratelimit.store.RateLimit;

/** The acquisitions (or leases) of one call, with their encoded limits and keys. */
final class ScriptCall {

	private static final byte[] NO_FIELD = new byte[0];

	final RateLimit[] rateLimits;

	final long[] costs;

	final EncodedLimit[] limits;

	final byte[][] keys;

	/** Each bucket's field in the hash its key names, or empty for a key of its own. */
	final byte[][] fields;

	private final EncodedLimits encodedLimits;

	private final byte[] keyPrefix;

	/**
	 * Creates a call of {@code size} buckets, each then {@link #set}.
	 * @param size the number of buckets
	 * @param encodedLimits the store's encoded limits
	 * @param keyPrefix the store's key prefix in UTF-8
	 */
	ScriptCall(int size, EncodedLimits encodedLimits, byte[] keyPrefix) {
		this.rateLimits = new RateLimit[size];
		this.costs = new long[size];
		this.limits = new EncodedLimit[size];
		this.keys = new byte[size][];
		this.fields = new byte[size][];
		this.encodedLimits = encodedLimits;
		this.keyPrefix = keyPrefix;
	}

	void set(int i, RateLimit limit, String identity, long cost) {
		this.rateLimits[i] = limit;
		this.costs[i] = cost;
		this.limits[i] = this.encodedLimits.get(limit);
		this.keys[i] = this.limits[i].key(this.keyPrefix, identity);
		this.fields[i] = this.limits[i].hashed ? identity.getBytes(StandardCharsets.UTF_8) : NO_FIELD;
	}

	int size() {
		return this.costs.length;
	}

}
