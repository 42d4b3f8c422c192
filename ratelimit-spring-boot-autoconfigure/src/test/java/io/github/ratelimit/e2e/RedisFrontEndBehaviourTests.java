package io.github.ratelimit.e2e;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Nested;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.RedisTemplate;
import org.springframework.test.context.ActiveProfiles;

import io.github.ratelimit.internal.core.RateLimitClock;
import io.github.ratelimit.internal.redis.RedisTestServer;
import io.github.ratelimit.store.RateLimitStore;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The behaviour suite with the buckets in a real Redis, deciding at the tests' clock.
 */
class RedisFrontEndBehaviourTests {

	/**
	 * Time of the Redis suite: its own, since the other suites move the applications' clocks
	 * centuries ahead, past what Redis keeps of a bucket's time (seven bytes of
	 * microseconds, until the year 3112).
	 */
	static final AtomicLong NOW = new AtomicLong(1_700_000_000_000_000L);

	/** The application's own connection factory, pointing at the tests' Redis server, and the suite's clock. */
	@Configuration(proxyBeanMethods = false)
	static class RedisConnection {

		@Bean
		RateLimitClock rateLimitClock() {
			return NOW::get;
		}

		@Bean
		LettuceConnectionFactory redisConnectionFactory() {
			return RedisTestServer.shared().connectionFactory();
		}

		/** What Spring Data Redis's repository support expects beside the factory. */
		@Bean
		RedisTemplate<Object, Object> redisTemplate(LettuceConnectionFactory redisConnectionFactory) {
			RedisTemplate<Object, Object> template = new RedisTemplate<>();
			template.setConnectionFactory(redisConnectionFactory);
			return template;
		}

	}

	@Nested
	@SpringBootTest(classes = { E2eApplication.class, RedisConnection.class },
			webEnvironment = WebEnvironment.RANDOM_PORT,
			properties = { "ratelimit.redis.timeout=5s", "ratelimit.redis.key-prefix=servlet-suite:",
					"spring.main.allow-bean-definition-overriding=true" })
	@ActiveProfiles("frontend")
	class Servlet extends FrontEndBehaviourTests {

		@org.springframework.beans.factory.annotation.Autowired
		RateLimitStore store;

		@Override
		void advance(Duration duration) {
			assertThat(this.store.name()).isEqualTo("redis");
			NOW.addAndGet(duration.toNanos() / 1_000);
		}

	}

	/**
	 * The same behaviours with Redis in local-first mode: one instance deciding against its
	 * shares answers every request as the exact mode does.
	 */
	@Nested
	@SpringBootTest(classes = { E2eApplication.class, RedisConnection.class },
			webEnvironment = WebEnvironment.RANDOM_PORT,
			properties = { "ratelimit.redis.timeout=5s", "ratelimit.redis.key-prefix=local-first-suite:",
					"ratelimit.redis.mode=local-first", "ratelimit.redis.exact-limits=quotes,daily,GET /things/{id}",
					"spring.main.allow-bean-definition-overriding=true" })
	@ActiveProfiles("frontend")
	class LocalFirst extends FrontEndBehaviourTests {

		@org.springframework.beans.factory.annotation.Autowired
		RateLimitStore store;

		@Override
		boolean advertisesExactQuota() {
			return false;
		}

		@Override
		void advance(Duration duration) {
			assertThat(this.store.status().buckets()).anyMatch((buckets) -> buckets.store().equals("local-first shares"));
			NOW.addAndGet(duration.toNanos() / 1_000);
		}

	}

}
