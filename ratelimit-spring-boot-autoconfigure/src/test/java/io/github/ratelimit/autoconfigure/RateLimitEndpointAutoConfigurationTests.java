package io.github.ratelimit.autoconfigure;

import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import io.github.ratelimit.actuate.RateLimitsEndpoint;
import io.github.ratelimit.actuate.RateLimitsEndpointWebExtension;
import io.github.ratelimit.core.LimitResolver;
import io.github.ratelimit.core.RateLimitStore;
import io.github.ratelimit.memory.InMemoryRateLimitStore;

import static org.assertj.core.api.Assertions.assertThat;

class RateLimitEndpointAutoConfigurationTests {

	private final ApplicationContextRunner contextRunner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(RateLimitAutoConfiguration.class));

	@Test
	void registersTheEndpointAndItsWebExtensionWhenExposedOverHttp() {
		this.contextRunner.withPropertyValues("management.endpoints.web.exposure.include=ratelimits")
			.run((context) -> assertThat(context).hasSingleBean(RateLimitsEndpoint.class)
				.hasSingleBean(RateLimitsEndpointWebExtension.class));
	}

	@Test
	void registersOnlyTheEndpointWhenExposedOverJmxAlone() {
		this.contextRunner
			.withPropertyValues("spring.jmx.enabled=true", "management.endpoints.jmx.exposure.include=ratelimits")
			.run((context) -> assertThat(context).hasSingleBean(RateLimitsEndpoint.class)
				.doesNotHaveBean(RateLimitsEndpointWebExtension.class));
	}

	@Test
	void backsOffWhenNotExposed() {
		this.contextRunner.run((context) -> assertThat(context).hasNotFailed()
			.doesNotHaveBean(RateLimitsEndpoint.class)
			.doesNotHaveBean(RateLimitsEndpointWebExtension.class));
	}

	@Test
	void backsOffWhenDisabled() {
		this.contextRunner
			.withPropertyValues("management.endpoints.web.exposure.include=ratelimits",
					"management.endpoint.ratelimits.access=NONE")
			.run((context) -> assertThat(context).doesNotHaveBean(RateLimitsEndpoint.class));
	}

	@Test
	void backsOffWithoutActuator() {
		this.contextRunner.withPropertyValues("management.endpoints.web.exposure.include=ratelimits")
			.withClassLoader(new FilteredClassLoader("org.springframework.boot.actuate"))
			.run((context) -> assertThat(context).hasNotFailed().doesNotHaveBean(RateLimitsEndpoint.class));
	}

	@Test
	void backsOffFromTheApplicationsOwnEndpoint() {
		this.contextRunner.withPropertyValues("management.endpoints.web.exposure.include=ratelimits")
			.withBean("myEndpoint", RateLimitsEndpoint.class,
					() -> new RateLimitsEndpoint(new LimitResolver(Map.of(), List.of()), new InMemoryRateLimitStore()))
			.run((context) -> assertThat(context).hasSingleBean(RateLimitsEndpoint.class)
				.hasBean("myEndpoint")
				.hasSingleBean(RateLimitsEndpointWebExtension.class));
	}

	@Test
	void listsTheStoreInUse() {
		this.contextRunner.withPropertyValues("management.endpoints.web.exposure.include=ratelimits")
			.run((context) -> {
				RateLimitsEndpoint.LimitsDescriptor limits = (RateLimitsEndpoint.LimitsDescriptor) context
					.getBean(RateLimitsEndpoint.class)
					.read(null, null);
				assertThat(limits.store()).isEqualTo(new RateLimitsEndpoint.StoreDescriptor("memory", "memory"));
				assertThat(context.getBean(RateLimitStore.class)).isInstanceOf(InMemoryRateLimitStore.class);
			});
	}

}
