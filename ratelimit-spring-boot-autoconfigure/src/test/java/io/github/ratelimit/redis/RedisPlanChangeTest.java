package io.github.ratelimit.redis;

import java.time.Duration;
import java.util.List;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.core.Acquisition;
import io.github.ratelimit.core.MutableClock;
import io.github.ratelimit.core.PlanChangeContractTest;
import io.github.ratelimit.core.RateLimit;
import io.github.ratelimit.core.RateLimitStore;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Plan changes against a real Redis server: the scripts take capacity and rate with every
 * call, so a changed plan applies to the state already in Redis.
 */
class RedisPlanChangeTest extends PlanChangeContractTest {

	private static final String PREFIX = "plans:";

	private static LettuceConnectionFactory connectionFactory;

	private static StringRedisTemplate redis;

	@BeforeAll
	static void connect() {
		connectionFactory = RedisTestServer.shared().connectionFactory();
		redis = new StringRedisTemplate(connectionFactory);
	}

	@AfterAll
	static void disconnect() {
		connectionFactory.destroy();
	}

	@Override
	protected RateLimitStore createStore(MutableClock clock) {
		RedisTestServer.shared().flushAll();
		return new RedisRateLimitStore(connectionFactory, PREFIX, clock);
	}

	@Override
	protected long bucketCount() {
		// a sliding window log keeps its sum beside its log
		return redis.keys(PREFIX + "*").stream().filter((key) -> !key.endsWith(":sum")).count();
	}

	@Test
	void bucketWrittenBeforeIntervalsWereRecordedIsReadAtTheCurrentInterval() {
		RateLimit limit = RateLimit.of("legacy", Algorithm.TOKEN_BUCKET, 10, Duration.ofSeconds(1));
		Acquisition acquisition = new Acquisition(limit, "user:alice", 1);
		String key = ((RedisRateLimitStore) store()).key(acquisition);
		// a bare timestamp: 4 tokens of 100ms owed at the contract's start time
		redis.opsForValue().set(key, Long.toString(T0 + 400_000));
		assertThat(store().tryAcquire(List.of(acquisition)).decisions().get(0).remaining()).isEqualTo(5);
		assertThat(redis.opsForValue().get(key)).isEqualTo((T0 + 500_000) + ":100000");
	}

}
