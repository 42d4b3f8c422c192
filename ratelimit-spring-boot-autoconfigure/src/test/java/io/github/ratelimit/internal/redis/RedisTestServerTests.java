package io.github.ratelimit.internal.redis;

import java.net.ConnectException;
import java.net.Socket;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.function.Supplier;

import org.junit.jupiter.api.Test;

import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;
import static org.awaitility.Awaitility.await;

/**
 * Tests for {@link RedisTestServer}.
 */
class RedisTestServerTests {

	@Test
	void answersPingSetAndGetThroughItsConnectionFactory() {
		LettuceConnectionFactory factory = RedisTestServer.shared().connectionFactory();
		try {
			StringRedisTemplate redis = template(factory);
			assertThat(redis.execute(RedisConnection::ping)).isEqualTo("PONG");
			redis.opsForValue().set("harness:standalone", "value");
			assertThat(redis.opsForValue().get("harness:standalone")).isEqualTo("value");
		}
		finally {
			factory.destroy();
		}
	}

	@Test
	void flushAllDeletesEveryKey() {
		RedisTestServer server = RedisTestServer.shared();
		LettuceConnectionFactory factory = server.connectionFactory();
		try {
			StringRedisTemplate redis = template(factory);
			redis.opsForValue().set("harness:flushed", "value");
			server.flushAll();
			assertThat(redis.hasKey("harness:flushed")).isFalse();
		}
		finally {
			factory.destroy();
		}
	}

	@Test
	void registersHostAndPortOfTheSharedServerForSpringBoot() {
		Map<String, Supplier<Object>> properties = new HashMap<>();
		RedisTestServer.properties(properties::put);
		assertThat(properties.get("spring.data.redis.host").get()).isEqualTo("127.0.0.1");
		assertThat(properties.get("spring.data.redis.port").get()).isEqualTo(RedisTestServer.shared().port());
		assertThat(RedisTestServer.shared().redisUri()).isEqualTo("redis://127.0.0.1:" + RedisTestServer.shared().port());
	}

	@Test
	void refusesToKillTheSharedServer() {
		assertThatIllegalStateException().isThrownBy(RedisTestServer.shared()::kill)
			.withMessageContaining("RedisTestServer.start()");
		assertThat(RedisTestServer.shared().isRunning()).isTrue();
	}

	@Test
	void restartsEmptyOnTheSamePortAfterBeingKilledAndClientsReconnect() {
		try (RedisTestServer server = RedisTestServer.start()) {
			int port = server.port();
			StringRedisTemplate redis = template(server.connectionFactory());
			redis.opsForValue().set("harness:lost", "value");

			server.kill();
			assertThat(server.isRunning()).isFalse();
			assertThatExceptionOfType(ConnectException.class).isThrownBy(() -> new Socket(server.host(), port).close());

			server.restart();
			assertThat(server.port()).isEqualTo(port);
			await().atMost(Duration.ofSeconds(10))
				.pollInterval(Duration.ofMillis(50))
				.untilAsserted(() -> assertThat(redis.execute(RedisConnection::ping)).isEqualTo("PONG"));
			assertThat(redis.hasKey("harness:lost")).isFalse();
			redis.opsForValue().set("harness:after", "value");
			assertThat(redis.opsForValue().get("harness:after")).isEqualTo("value");
		}
	}

	private static StringRedisTemplate template(LettuceConnectionFactory factory) {
		StringRedisTemplate template = new StringRedisTemplate(factory);
		template.afterPropertiesSet();
		return template;
	}

}
