package io.github.ratelimit.internal.redis;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicReferenceArray;

import io.github.ratelimit.store.RateLimit;

/**
 * The {@link EncodedLimit encoded limits} of one store, computed once per limit. A
 * request passes the same {@link RateLimit} instance every time, so it is first looked up
 * by reference in a small table, sparing the map the hash and the comparison of every
 * field of the record.
 */
final class EncodedLimits {

	/** Bound of the limits whose arguments are kept encoded. */
	private static final int MAX_ENCODED_LIMITS = 4096;

	/** Size of the table of recently encoded limits; a power of two. */
	private static final int RECENT_LIMITS = 64;

	private final RedisKeyLayout layout;

	private final Map<RateLimit, EncodedLimit> encoded = new ConcurrentHashMap<>();

	/** Encoded limits by the identity hash of their {@link RateLimit}. */
	private final AtomicReferenceArray<EncodedLimit> recent = new AtomicReferenceArray<>(RECENT_LIMITS);

	EncodedLimits(RedisKeyLayout layout) {
		this.layout = layout;
	}

	EncodedLimit get(RateLimit limit) {
		int slot = System.identityHashCode(limit) & (RECENT_LIMITS - 1);
		EncodedLimit recent = this.recent.get(slot);
		if (recent != null && recent.limit == limit) {
			return recent;
		}
		EncodedLimit encoded = this.encoded.get(limit);
		if (encoded != null) {
			this.recent.set(slot, encoded);
		}
		else {
			if (this.encoded.size() >= MAX_ENCODED_LIMITS) {
				// limits are configured, so few; a caller making limits afresh must not grow this
				this.encoded.clear();
			}
			encoded = new EncodedLimit(limit, this.layout);
			this.encoded.put(limit, encoded);
		}
		return encoded;
	}

}
