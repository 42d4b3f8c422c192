package io.github.ratelimit.internal.redis;

/**
 * How the Redis store lays out the buckets of token and leaky bucket limits. Buckets of the
 * other algorithms are keys of their own in either layout.
 */
public enum RedisKeyLayout {

	/**
	 * Every bucket is a key of its own, {@code <prefix>{<identity>}:<limit id>}, expiring
	 * when its state stops mattering. Simplest to read and to delete one by one.
	 */
	KEY_PER_BUCKET,

	/**
	 * The buckets of one limit whose identities fall into one Redis Cluster slot are fields
	 * of one hash, {@code <prefix>{<slot tag>}:<limit id>:h}, keyed by identity; the slot tag
	 * is a short text hashing to the identity's own slot, so the hash lives where the
	 * identity's own key would. Costs a fraction of the memory per identity; needs Redis
	 * 6.2 or later.
	 */
	HASH_PER_SLOT

}
