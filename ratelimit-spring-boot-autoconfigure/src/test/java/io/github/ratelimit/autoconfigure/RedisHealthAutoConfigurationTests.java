package io.github.ratelimit.autoconfigure;

import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.data.redis.autoconfigure.health.DataRedisHealthContributorAutoConfiguration;
import org.springframework.boot.data.redis.autoconfigure.health.DataRedisReactiveHealthContributorAutoConfiguration;
import org.springframework.boot.data.redis.health.DataRedisReactiveHealthIndicator;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.boot.health.contributor.Status;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;


import static org.assertj.core.api.Assertions.assertThat;

/**
 * How the starter's {@code redis} health indicator stands beside Spring Boot's: it takes
 * Boot's place when Redis serves rate limits only, and leaves it alone otherwise. No
 * connection is opened here; Redis is at a loopback port where nothing listens.
 */
class RedisHealthAutoConfigurationTests {

	private final ApplicationContextRunner contextRunner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class,
				DataRedisHealthContributorAutoConfiguration.class,
				DataRedisReactiveHealthContributorAutoConfiguration.class, RateLimitAutoConfiguration.class))
		.withPropertyValues("spring.data.redis.host=127.0.0.1", "spring.data.redis.port=1",
				"spring.data.redis.connect-timeout=1s");

	@Test
	void replacesBootsRedisIndicatorByDefault() {
		this.contextRunner.run((context) -> {
			assertThat(context).hasNotFailed();
			assertThat(context).hasSingleBean(RateLimitRedisHealthIndicator.class);
			assertThat(context.getBean("redisHealthIndicator")).isInstanceOf(RateLimitRedisHealthIndicator.class);
			assertThat(context).doesNotHaveBean("redisHealthContributor");
		});
	}

	@Test
	void answersUpWithinTheStoreTimeoutWhenNothingListens() {
		this.contextRunner.withPropertyValues("ratelimit.redis.timeout=300ms").run((context) -> {
			HealthIndicator indicator = context.getBean(RateLimitRedisHealthIndicator.class);
			long start = System.nanoTime();
			Health health = indicator.health();
			long tookMillis = (System.nanoTime() - start) / 1_000_000;
			assertThat(health.getStatus()).isEqualTo(Status.UP);
			assertThat(health.getDetails()).containsEntry("redis", "unreachable").containsKey("error");
			assertThat(tookMillis).isLessThan(5_000);
		});
	}

	@Test
	void keepsBootsIndicatorWhenRedisServesMoreThanRateLimits() {
		this.contextRunner.withPropertyValues("ratelimit.redis.rate-limits-only=false").run((context) -> {
			assertThat(context).doesNotHaveBean(RateLimitRedisHealthIndicator.class);
			assertThat(context.getBean("redisHealthContributor")).isInstanceOf(DataRedisReactiveHealthIndicator.class);
		});
	}

	@Test
	void keepsBootsIndicatorWhenTheMemoryStoreDecides() {
		this.contextRunner.withPropertyValues("ratelimit.store=memory").run((context) -> {
			assertThat(context).doesNotHaveBean(RateLimitRedisHealthIndicator.class);
			assertThat(context).hasBean("redisHealthContributor");
		});
	}

	@Test
	void addsNoIndicatorWhenTheRedisIndicatorIsDisabled() {
		this.contextRunner.withPropertyValues("management.health.redis.enabled=false").run((context) -> {
			assertThat(context).doesNotHaveBean(RateLimitRedisHealthIndicator.class);
			assertThat(context).doesNotHaveBean("redisHealthContributor");
		});
	}

	@Test
	void backsOffForTheApplicationsOwnRedisIndicator() {
		this.contextRunner.withBean("redisHealthIndicator", HealthIndicator.class, () -> () -> Health.up().build())
			.run((context) -> assertThat(context).doesNotHaveBean(RateLimitRedisHealthIndicator.class));
	}

}
