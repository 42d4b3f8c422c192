package io.github.ratelimit.autoconfigure;

import java.util.List;
import java.util.Map;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.ApplicationContext;

import io.github.ratelimit.RateLimited;
import io.github.ratelimit.internal.actuate.RateLimitsEndpoint;
import io.github.ratelimit.internal.actuate.RateLimitsEndpointWebExtension;
import io.github.ratelimit.internal.core.LimitResolver;
import io.github.ratelimit.internal.core.SettledCosts;
import io.github.ratelimit.internal.memory.InMemoryRateLimitStore;
import io.github.ratelimit.store.RateLimitStore;

import static org.assertj.core.api.Assertions.assertThat;

@ExtendWith(OutputCaptureExtension.class)
class RateLimitEndpointAutoConfigurationTests {

	private static final String RESET_WARNING = "The 'ratelimits' actuator endpoint is exposed over HTTP with its reset";

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
					() -> new RateLimitsEndpoint(new LimitResolver(Map.of(), List.of()), new InMemoryRateLimitStore(),
							null, new SettledCosts()))
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

	@Test
	void showsWhatCallsOfALimitThatSettlesReservedAndWereCharged() {
		this.contextRunner.withConfiguration(AutoConfigurations.of(AopAutoConfiguration.class))
			.withBean(SimpleMeterRegistry.class)
			.withBean(ChatService.class)
			.withPropertyValues("management.endpoints.web.exposure.include=ratelimits")
			.run((context) -> {
				ChatService chat = context.getBean(ChatService.class);
				chat.complete(100, 40);
				chat.complete(50, 80);
				chat.ping();
				assertThat(costs(context, "chat-tokens")).isEqualTo(new RateLimitsEndpoint.CostsDescriptor(2, 150, 120, 60, 30));
				assertThat(costs(context, "chat-pings")).isNull();
				MeterRegistry registry = context.getBean(MeterRegistry.class);
				Counter settled = registry.get("ratelimit.cost.settled").tag("limit", "chat-tokens").counter();
				assertThat(settled.count()).isEqualTo(120);
				assertThat(settled.getId().getBaseUnit()).isEqualTo("tokens");
				assertThat(registry.get("ratelimit.requests").tag("limit", "chat-pings").counters()).isNotEmpty();
				assertThat(registry.find("ratelimit.cost.reserved").tag("limit", "chat-pings").meters()).isEmpty();
			});
	}

	@Test
	void showsZeroCostsForALimitThatSettlesBeforeAnyCallSettled() {
		this.contextRunner.withConfiguration(AutoConfigurations.of(AopAutoConfiguration.class))
			.withBean(ChatService.class)
			.withPropertyValues("management.endpoints.web.exposure.include=ratelimits")
			.run((context) -> assertThat(costs(context, "chat-tokens"))
				.isEqualTo(new RateLimitsEndpoint.CostsDescriptor(0, 0, 0, 0, 0)));
	}

	/** The costs the {@code ratelimits} endpoint shows for the one limit of that name. */
	private static RateLimitsEndpoint.CostsDescriptor costs(ApplicationContext context, String name) {
		RateLimitsEndpoint.LimitsDescriptor limits = (RateLimitsEndpoint.LimitsDescriptor) context
			.getBean(RateLimitsEndpoint.class)
			.read(null, null);
		return assertThat(limits.limits()).filteredOn((limit) -> limit.name().equals(name))
			.singleElement()
			.actual()
			.costs();
	}

	@Test
	void warnsThatAnyoneCanResetLimitsWhenTheResetIsExposedOverHttpWithoutSpringSecurity(CapturedOutput output) {
		this.contextRunner.withPropertyValues("management.endpoints.web.exposure.include=ratelimits")
			.withClassLoader(new FilteredClassLoader("org.springframework.security"))
			.run((context) -> {
				assertThat(context).hasNotFailed().hasSingleBean(RateLimitsEndpointWebExtension.class);
				assertThat(output).contains("WARN")
					.contains(RESET_WARNING)
					.contains("management.endpoint.ratelimits.access=read-only");
			});
	}

	@Test
	void doesNotWarnWhenSpringSecurityIsOnTheClassPath(CapturedOutput output) {
		this.contextRunner.withPropertyValues("management.endpoints.web.exposure.include=ratelimits")
			.run((context) -> {
				assertThat(context).hasSingleBean(RateLimitsEndpointWebExtension.class)
					.doesNotHaveBean(RateLimitsEndpointResetWarning.class);
				assertThat(output).doesNotContain(RESET_WARNING);
			});
	}

	@ParameterizedTest
	@ValueSource(strings = { "management.endpoint.ratelimits.access=READ_ONLY",
			"management.endpoints.access.max-permitted=READ_ONLY" })
	void doesNotWarnWhenTheResetIsNotAllowed(String access, CapturedOutput output) {
		this.contextRunner.withPropertyValues("management.endpoints.web.exposure.include=ratelimits", access)
			.withClassLoader(new FilteredClassLoader("org.springframework.security"))
			.run((context) -> {
				assertThat(context).hasSingleBean(RateLimitsEndpointWebExtension.class);
				assertThat(output).doesNotContain(RESET_WARNING);
			});
	}

	@Test
	void doesNotWarnWhenExposedOverJmxAlone(CapturedOutput output) {
		this.contextRunner
			.withPropertyValues("spring.jmx.enabled=true", "management.endpoints.jmx.exposure.include=ratelimits")
			.withClassLoader(new FilteredClassLoader("org.springframework.security"))
			.run((context) -> {
				assertThat(context).hasSingleBean(RateLimitsEndpoint.class)
					.doesNotHaveBean(RateLimitsEndpointResetWarning.class);
				assertThat(output).doesNotContain(RESET_WARNING);
			});
	}

	static class ChatService {

		@RateLimited(name = "chat-tokens", capacity = 1000, period = "1m", unit = "tokens",
				keyExpression = "'tenant:a'", estimate = "#maxTokens", actualCost = "#result")
		public long complete(long maxTokens, long used) {
			return used;
		}

		@RateLimited(name = "chat-pings", capacity = 10, period = "1m", keyExpression = "'tenant:a'")
		public void ping() {
		}

	}

}
