package io.github.ratelimit.internal.redis;

import java.time.Duration;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.internal.core.PlanChangeContractTest;
import io.github.ratelimit.store.Acquisition;
import io.github.ratelimit.store.RateLimit;
import io.github.ratelimit.store.RateLimitStore;
import io.github.ratelimit.store.contract.MutableClock;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Plan changes against a real Redis server: the scripts take capacity and rate with every
 * call, so a changed plan applies to the state already in Redis.
 */
class RedisPlanChangeTest extends PlanChangeContractTest {

	@RegisterExtension
	static final SharedRedisConnection redisConnection = new SharedRedisConnection();

	private static final String PREFIX = "plans:";

	@Override
	protected RateLimitStore createStore(MutableClock clock) {
		RedisTestServer.shared().flushAll();
		return RedisRateLimitStore.builder(redisConnection.factory()).keyPrefix(PREFIX).clock(clock).build();
	}

	@Override
	protected long bucketCount() {
		// a sliding window log keeps its sum beside its log
		return redisConnection.template().keys(PREFIX + "*").stream().filter((key) -> !key.endsWith(":sum")).count();
	}

	@Test
	void aValueOfAnotherFormatIsReadAsAFullBucketAndReplaced() {
		RateLimit limit = RateLimit.of("legacy", Algorithm.TOKEN_BUCKET, 10, Duration.ofSeconds(1));
		Acquisition acquisition = new Acquisition(limit, "user:alice", 1);
		String key = ((RedisRateLimitStore) store()).key(acquisition);
		// the text format of earlier versions, which named their keys differently
		redisConnection.template().opsForValue().set(key, (T0 + 400_000) + ":100000");
		assertThat(store().tryAcquire(List.of(acquisition)).decisions().get(0).remaining()).isEqualTo(9);
		assertThat(RedisValues.value(redisConnection.template(), key)).isEqualTo((T0 + 100_000) + ":100000");
	}

}
