package io.github.ratelimit.autoconfigure;

import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.ApplicationContext;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.core.RedisCallback;
import org.springframework.data.redis.core.StringRedisTemplate;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.RateLimitConfigurationException;
import io.github.ratelimit.internal.core.FailoverRateLimitStore;
import io.github.ratelimit.internal.core.RateLimiter;
import io.github.ratelimit.internal.memory.InMemoryRateLimitStore;
import io.github.ratelimit.internal.redis.RedisRateLimitStore;
import io.github.ratelimit.internal.redis.RedisTestServer;
import io.github.ratelimit.store.Acquisition;
import io.github.ratelimit.store.RateLimit;
import io.github.ratelimit.store.RateLimitStore;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Which store the auto-configuration picks, with and without Redis.
 */
class RateLimitStoreAutoConfigurationTests {

	private final ApplicationContextRunner contextRunner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class, RateLimitAutoConfiguration.class));

	private ApplicationContextRunner withRedis() {
		RedisTestServer redis = RedisTestServer.shared();
		return this.contextRunner.withPropertyValues("spring.data.redis.host=" + redis.host(),
				"spring.data.redis.port=" + redis.port());
	}

	@Test
	void usesRedisWhenTheApplicationHasARedisConnectionFactory() {
		withRedis().run((context) -> {
			assertThat(context).hasSingleBean(RedisConnectionFactory.class);
			assertThat(context).hasSingleBean(RateLimitStore.class);
			assertThat(context.getBean(RateLimitStore.class)).isInstanceOfSatisfying(FailoverRateLimitStore.class,
					(store) -> assertThat(store.name()).isEqualTo("redis"));
			assertThat(context).doesNotHaveBean(InMemoryRateLimitStore.class);
		});
	}

	@Test
	void usesMemoryWhenMemoryIsChosenEvenWithRedis() {
		withRedis().withPropertyValues("ratelimit.store=memory").run((context) -> {
			assertThat(context).hasSingleBean(RedisConnectionFactory.class);
			assertThat(context).hasSingleBean(RateLimitStore.class);
			assertThat(context.getBean(RateLimitStore.class)).isInstanceOf(InMemoryRateLimitStore.class);
		});
	}

	@Test
	void usesRedisWhenRedisIsChosen() {
		withRedis().withPropertyValues("ratelimit.store=redis").run((context) -> {
			assertThat(context).hasSingleBean(RateLimitStore.class);
			assertThat(context.getBean(RateLimitStore.class)).isInstanceOfSatisfying(FailoverRateLimitStore.class,
					(store) -> assertThat(store.name()).isEqualTo("redis"));
		});
	}

	@Test
	void usesMemoryWithoutRedisOnTheClasspath() {
		this.contextRunner.withClassLoader(new FilteredClassLoader("org.springframework.data.redis"))
			.run((context) -> {
				assertThat(context).hasNotFailed();
				assertThat(context).doesNotHaveBean("redisConnectionFactory");
				assertThat(context).hasSingleBean(RateLimitStore.class);
				assertThat(context.getBean(RateLimitStore.class)).isInstanceOf(InMemoryRateLimitStore.class);
				assertThat(context).hasSingleBean(RateLimiter.class);
			});
	}

	@Test
	void failsWhenRedisIsChosenButNotOnTheClasspath() {
		this.contextRunner.withClassLoader(new FilteredClassLoader("org.springframework.data.redis"))
			.withPropertyValues("ratelimit.store=redis")
			.run((context) -> assertThat(context).getFailure()
				.rootCause()
				.isInstanceOf(RateLimitConfigurationException.class)
				.hasMessageContaining("ratelimit.store")
				.hasMessageContaining("RedisConnectionFactory"));
	}

	@Test
	void userStoreWinsOverRedis() {
		InMemoryRateLimitStore userStore = new InMemoryRateLimitStore(() -> 0, 10);
		withRedis().withBean("userStore", RateLimitStore.class, () -> userStore).run((context) -> {
			assertThat(context).hasSingleBean(RateLimitStore.class);
			assertThat(context.getBean(RateLimitStore.class)).isSameAs(userStore);
		});
	}

	@Test
	void keyPrefixPropertyPrefixesTheKeysWrittenToRedis() {
		RedisTestServer.shared().flushAll();
		withRedis().withPropertyValues("ratelimit.redis.key-prefix=orders-service:").run((context) -> {
			RateLimitStore store = context.getBean(RateLimitStore.class);
			RateLimit limit = RateLimit.of("GET /api/orders/{id}", Algorithm.TOKEN_BUCKET, 3, Duration.ofMinutes(1));
			Acquisition acquisition = new Acquisition(limit, "user:alice", 1);
			assertThat(store.tryAcquire(List.of(acquisition)).allowed()).isTrue();
			String key = "orders-service:{user:alice}:" + limit.id();
			StringRedisTemplate redis = new StringRedisTemplate(context.getBean(RedisConnectionFactory.class));
			assertThat(redis.keys("*")).containsExactly(key);
			assertThat(redis.getExpire(key)).isPositive();
		});
	}

	@Test
	void hashPerSlotKeyLayoutKeepsTokenBucketsInHashes() {
		RedisTestServer.shared().flushAll();
		withRedis().withPropertyValues("ratelimit.redis.key-layout=hash-per-slot").run((context) -> {
			RateLimitStore store = context.getBean(RateLimitStore.class);
			RateLimit limit = RateLimit.of("GET /api/orders/{id}", Algorithm.TOKEN_BUCKET, 3, Duration.ofMinutes(1));
			assertThat(store.tryAcquire(List.of(new Acquisition(limit, "user:alice", 1))).allowed()).isTrue();
			StringRedisTemplate redis = new StringRedisTemplate(context.getBean(RedisConnectionFactory.class));
			assertThat(redis.keys("*")).singleElement()
				.satisfies((key) -> assertThat(key).matches("ratelimit:\\{[0-9a-zA-Z]{1,3}\\}:" + limit.id() + ":h"))
				.satisfies((key) -> assertThat(redis.opsForHash().keys(key)).containsExactly("user:alice"));
		});
	}

	@Test
	void decidesThroughARedisFunctionUnlessFunctionsAreTurnedOff() {
		RedisTestServer.shared().flushAll();
		withRedis().run((context) -> assertThat(decisionCalls(context, "user:alice"))
			.isEqualTo(Map.of("fcall", true, "evalsha", false)));
		withRedis().withPropertyValues("ratelimit.redis.functions=false")
			.run((context) -> assertThat(decisionCalls(context, "user:bob"))
				.isEqualTo(Map.of("fcall", false, "evalsha", true)));
	}

	/** Decides once for {@code identity}; whether Redis counted FCALL and EVALSHA calls for it. */
	private static Map<String, Boolean> decisionCalls(ApplicationContext context, String identity) {
		StringRedisTemplate redis = new StringRedisTemplate(context.getBean(RedisConnectionFactory.class));
		long functions = calls(redis, "fcall");
		long scripts = calls(redis, "evalsha");
		RateLimit limit = RateLimit.of("GET /api/reports", Algorithm.TOKEN_BUCKET, 3, Duration.ofMinutes(1));
		RateLimitStore store = context.getBean(RateLimitStore.class);
		assertThat(store.tryAcquire(List.of(new Acquisition(limit, identity, 1))).allowed()).isTrue();
		Map<String, Boolean> called = new HashMap<>();
		called.put("fcall", calls(redis, "fcall") > functions);
		called.put("evalsha", calls(redis, "evalsha") > scripts);
		return called;
	}

	/** Calls of a command Redis counted so far. */
	private static long calls(StringRedisTemplate redis, String command) {
		Properties stats = redis.execute((RedisCallback<Properties>) (connection) -> connection.serverCommands()
			.info("commandstats"));
		String field = (stats != null) ? stats.getProperty("cmdstat_" + command) : null;
		if (field == null) {
			return 0;
		}
		Matcher calls = Pattern.compile("calls=(\\d+)").matcher(field);
		assertThat(calls.find()).as(field).isTrue();
		return Long.parseLong(calls.group(1));
	}

}
