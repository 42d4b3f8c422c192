package io.github.ratelimit.internal.redis;

import java.time.Duration;
import java.util.List;

import io.lettuce.core.cluster.SlotHash;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.internal.core.ThrottledLog;
import io.github.ratelimit.internal.local.LocalFirstRateLimitStore;
import io.github.ratelimit.internal.local.LocalFirstSettings;
import io.github.ratelimit.store.Acquisition;
import io.github.ratelimit.store.RateLimit;
import io.github.ratelimit.store.contract.MutableClock;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The local-first store over a real Redis Cluster, for requests whose limits fall into
 * several slots.
 */
class LocalFirstRedisClusterTests {

	private static LettuceConnectionFactory connectionFactory;

	@BeforeAll
	static void connect() {
		connectionFactory = RedisTestCluster.shared().connectionFactory();
	}

	@AfterAll
	static void disconnect() {
		connectionFactory.destroy();
	}

	@Test
	void requestsWhoseLimitsSpanSlotsAreAdmittedWhileTheBucketsHaveUnits() {
		MutableClock clock = new MutableClock();
		RedisRateLimitStore redis = RedisRateLimitStore.builder(connectionFactory)
			.keyPrefix("local-first-" + System.nanoTime() + ":")
			.clock(clock)
			.build();
		// no sync runs: the shares grow from what the requests lease
		LocalFirstRateLimitStore store = new LocalFirstRateLimitStore(redis, redis, new LocalFirstSettings(clock, Duration.ofHours(1),
				(limit) -> false, 1_000, new ThrottledLog(0, System::nanoTime), (message) -> {
				}));
		RateLimit perUser = RateLimit.of("per-user", Algorithm.TOKEN_BUCKET, 100, Duration.ofHours(1));
		RateLimit perIp = RateLimit.of("per-ip", Algorithm.TOKEN_BUCKET, 100, Duration.ofHours(1));
		List<Acquisition> request = List.of(new Acquisition(perUser, "user:alice", 1),
				new Acquisition(perIp, "ip:203.0.113.9", 1));
		assertThat(SlotHash.getSlot("user:alice")).isNotEqualTo(SlotHash.getSlot("ip:203.0.113.9"));
		for (int i = 1; i <= 20; i++) {
			assertThat(store.tryAcquire(request).allowed()).as("request %d", i).isTrue();
		}
		store.close();
	}

}
