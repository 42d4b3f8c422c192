package io.github.ratelimit.internal.redis;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

import io.lettuce.core.cluster.SlotHash;

import io.github.ratelimit.internal.core.AlgorithmSpec;

/**
 * The key layout: where a bucket lives in Redis. A bucket is the key
 * {@code <prefix>{<identity>}:<limit id>}, the identity being the hash tag, so that every
 * limit of one identity shares one Cluster slot; or, with the
 * {@link RedisKeyLayout#HASH_PER_SLOT hash-per-slot} layout, a field (its identity) of
 * {@code <prefix>{<slot tag>}:<limit id>:h}, the {@link SlotTags slot tag} hashing to the
 * identity's own slot.
 */
final class BucketKeys {

	/** Ends the name of a hash holding buckets, after the limit id. */
	private static final String HASH_SUFFIX = ":h";

	private BucketKeys() {
	}

	/**
	 * What ends a bucket's key after its identity (or slot tag).
	 * @param limitId the limit's id
	 * @param hashed whether the bucket is a field of a hash
	 * @return {@code "}:<limit id>"}, or for a hash {@code "}:<limit id>:h"}: a hash is
	 * never named as a key of its own would be, even by an identity that reads like a slot
	 * tag, whichever layout wrote it
	 */
	static byte[] keyEnd(String limitId, boolean hashed) {
		return ("}:" + limitId + (hashed ? HASH_SUFFIX : "")).getBytes(StandardCharsets.US_ASCII);
	}

	/**
	 * The key of a bucket.
	 * @param prefix the store's key prefix in UTF-8
	 * @param identity the bucket's identity
	 * @param hashed whether the bucket is a field of a hash per slot
	 * @param keyEnd the limit's {@link #keyEnd key end}
	 * @return {@code <prefix>{<identity>}<key end>}, or for a bucket kept in a hash
	 * {@code <prefix>{<tag of the identity's slot>}<key end>}
	 */
	static byte[] key(byte[] prefix, String identity, boolean hashed, byte[] keyEnd) {
		byte[] middle = escape(identity).getBytes(StandardCharsets.UTF_8);
		if (hashed) {
			middle = SlotTags.of(SlotHash.getSlot(middle));
		}
		byte[] key = new byte[prefix.length + 1 + middle.length + keyEnd.length];
		System.arraycopy(prefix, 0, key, 0, prefix.length);
		key[prefix.length] = '{';
		System.arraycopy(middle, 0, key, prefix.length + 1, middle.length);
		System.arraycopy(keyEnd, 0, key, prefix.length + 1 + middle.length, keyEnd.length);
		return key;
	}

	/**
	 * Every key of one bucket, all in the slot of its first.
	 * @param spec the bucket's algorithm
	 * @param key the bucket's key
	 * @return the key followed by each of the algorithm's suffixes, or the key alone
	 */
	static List<String> keys(AlgorithmSpec spec, String key) {
		List<String> suffixes = spec.redisKeySuffixes();
		if (suffixes.size() == 1) {
			return List.of(key);
		}
		List<String> keys = new ArrayList<>(suffixes.size());
		for (String suffix : suffixes) {
			keys.add(key + suffix);
		}
		return keys;
	}

	/**
	 * The pattern matching every key under a prefix, its glob characters escaped.
	 * @param prefix the key prefix
	 * @return the pattern for {@code KEYS}
	 */
	static String allUnder(String prefix) {
		return prefix.replaceAll("[*?\\[\\]\\\\]", "\\\\$0") + "*";
	}

	/** Keeps identities from other stores from opening a hash tag of their own. */
	private static String escape(String identity) {
		if (identity.indexOf('{') < 0 && identity.indexOf('}') < 0 && identity.indexOf('%') < 0) {
			return identity;
		}
		return identity.replace("%", "%25").replace("{", "%7B").replace("}", "%7D");
	}

}
