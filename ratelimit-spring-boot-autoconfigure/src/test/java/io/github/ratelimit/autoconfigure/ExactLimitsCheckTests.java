package io.github.ratelimit.autoconfigure;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.context.properties.source.MapConfigurationPropertySource;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import io.github.ratelimit.internal.core.LimitResolver;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Names in {@code ratelimit.redis.exact-limits} that no limit has are reported once the
 * application has started.
 */
class ExactLimitsCheckTests {

	private final List<String> warnings = new ArrayList<>();

	@Test
	void warnsAboutANameNoLimitHasAndListsTheLimits() {
		LimitResolver resolver = resolver(Map.of("ratelimit.policies.search.capacity", "10"));
		new ExactLimitsCheck(List.of("search", "serach"), resolver, this.warnings::add).onApplicationEvent(null);
		assertThat(this.warnings).singleElement()
			.satisfies((warning) -> assertThat(warning).contains("ratelimit.redis.exact-limits")
				.contains("[serach]")
				.contains("Its limits: [search]"));
	}

	@Test
	void saysNothingWhenEveryNameIsALimit() {
		LimitResolver resolver = resolver(Map.of("ratelimit.policies.search.capacity", "10"));
		ExactLimitsCheck check = new ExactLimitsCheck(List.of("search"), resolver, this.warnings::add);
		check.onApplicationEvent(null);
		assertThat(this.warnings).isEmpty();
	}

	@Test
	void isPartOfTheRedisStoreConfiguration() {
		new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(RateLimitAutoConfiguration.class))
			.withBean(RedisConnectionFactory.class,
					() -> new LettuceConnectionFactory(new RedisStandaloneConfiguration("127.0.0.1", 1)))
			.withPropertyValues("ratelimit.redis.mode=local-first", "ratelimit.redis.exact-limits=login-username")
			.run((context) -> assertThat(context).hasSingleBean(ExactLimitsCheck.class));
	}

	private static LimitResolver resolver(Map<String, String> values) {
		RateLimitProperties properties = new Binder(new MapConfigurationPropertySource(values))
			.bindOrCreate("ratelimit", Bindable.of(RateLimitProperties.class));
		return RateLimitPropertiesMapper.limitResolver(properties);
	}

}
