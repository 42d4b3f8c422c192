package io.github.ratelimit.internal.redis;

import io.github.ratelimit.store.RateLimitStore;
import io.github.ratelimit.store.contract.MutableClock;

/**
 * The lease contract with the hash-per-slot key layout: the local-first mode leases token
 * buckets kept as hash fields as it leases keys.
 */
class RedisHashPerSlotShareStoreTests extends RedisShareStoreTests {

	@Override
	protected RateLimitStore createStore(MutableClock clock) {
		RedisTestServer.shared().flushAll();
		return RedisRateLimitStore.builder(connectionFactory)
			.keyPrefix("lease:")
			.clock(clock)
			.layout(RedisKeyLayout.HASH_PER_SLOT)
			.build();
	}

}
