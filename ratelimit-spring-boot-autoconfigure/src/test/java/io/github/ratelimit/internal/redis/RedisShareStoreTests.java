package io.github.ratelimit.internal.redis;

import org.junit.jupiter.api.BeforeAll;

import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import io.github.ratelimit.internal.core.ShareStoreContractTest;
import io.github.ratelimit.store.RateLimitStore;
import io.github.ratelimit.store.contract.MutableClock;

/** The lease contract on a real Redis server: costs and extras in one script call. */
class RedisShareStoreTests extends ShareStoreContractTest {

	static LettuceConnectionFactory connectionFactory;

	@BeforeAll
	static void connect() {
		connectionFactory = RedisTestServer.shared().connectionFactory();
	}

	@Override
	protected RateLimitStore createStore(MutableClock clock) {
		RedisTestServer.shared().flushAll();
		return RedisRateLimitStore.builder(connectionFactory).keyPrefix("lease:").clock(clock).build();
	}

}
