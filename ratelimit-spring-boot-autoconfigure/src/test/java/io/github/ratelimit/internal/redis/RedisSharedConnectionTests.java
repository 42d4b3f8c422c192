package io.github.ratelimit.internal.redis;

import java.time.Duration;
import java.util.List;

import org.junit.jupiter.api.Test;

import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.store.Acquisition;
import io.github.ratelimit.store.RateLimit;
import io.github.ratelimit.store.RateLimitStore;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The store with a per-call timeout keeps the commands of the factory's shared
 * connection rather than borrowing a connection per call: it must follow the factory when
 * the factory replaces that connection, and work as before with a factory that lends a
 * connection per call.
 */
class RedisSharedConnectionTests {

	private static final RateLimit LIMIT = RateLimit.of("shared", Algorithm.FIXED_WINDOW, 1_000, Duration.ofHours(1));

	@Test
	void followsTheFactoryWhenItReplacesItsSharedConnection() {
		LettuceConnectionFactory factory = RedisTestServer.shared().connectionFactory();
		try {
			RateLimitStore store = RedisRateLimitStore.builder(factory)
				.keyPrefix("shared:" + System.nanoTime() + ":")
				.timeout(Duration.ofSeconds(2))
				.build();
			assertThat(remaining(store)).isEqualTo(999);
			factory.resetConnection();
			// the call that finds the replaced connection closed may fail without reaching
			// Redis (the fallback decides it); the next one looks the connection up again
			try {
				store.tryAcquire(List.of(new Acquisition(LIMIT, "user:alice", 1)));
			}
			catch (RuntimeException ex) {
				// once at most
			}
			long remaining = remaining(store);
			assertThat(remaining).isBetween(997L, 998L);
			assertThat(remaining(store)).isEqualTo(remaining - 1);
			assertThat(remaining(store)).isEqualTo(remaining - 2);
		}
		finally {
			factory.destroy();
		}
	}

	@Test
	void borrowsAConnectionPerCallFromAFactoryThatDoesNotShareOne() {
		LettuceConnectionFactory factory = RedisTestServer.shared().connectionFactory();
		factory.setShareNativeConnection(false);
		try {
			RateLimitStore store = RedisRateLimitStore.builder(factory)
				.keyPrefix("unshared:" + System.nanoTime() + ":")
				.timeout(Duration.ofSeconds(2))
				.build();
			for (long expected = 999; expected > 990; expected--) {
				assertThat(remaining(store)).isEqualTo(expected);
			}
		}
		finally {
			factory.destroy();
		}
	}

	private static long remaining(RateLimitStore store) {
		return store.tryAcquire(List.of(new Acquisition(LIMIT, "user:alice", 1))).decisions().get(0).remaining();
	}

}
