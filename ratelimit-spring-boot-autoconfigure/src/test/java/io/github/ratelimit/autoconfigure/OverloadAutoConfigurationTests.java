package io.github.ratelimit.autoconfigure;


import java.time.Duration;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import jakarta.servlet.DispatcherType;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.context.properties.bind.BindException;
import org.springframework.boot.context.properties.bind.UnboundConfigurationPropertiesException;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.test.context.assertj.AssertableWebApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.context.runner.ReactiveWebApplicationContextRunner;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.boot.web.servlet.FilterRegistrationBean;

import io.github.ratelimit.RateLimitConfigurationException;
import io.github.ratelimit.RequestPriority;
import io.github.ratelimit.internal.actuate.RateLimitsEndpoint;
import io.github.ratelimit.internal.metrics.OverloadMetrics;
import io.github.ratelimit.internal.overload.AdaptiveLimits;
import io.github.ratelimit.internal.overload.OverloadLimiter;
import io.github.ratelimit.internal.pipeline.OverloadGate;
import io.github.ratelimit.internal.web.OverloadFilter;
import io.github.ratelimit.internal.webflux.OverloadWebFilter;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Overload protection is off until enabled; enabled, it puts its filter ahead of the route
 * filter on either stack, with meters and an endpoint section; a bad value fails the
 * startup naming its property.
 */
class OverloadAutoConfigurationTests {

	private final WebApplicationContextRunner servletRunner = new WebApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(RateLimitAutoConfiguration.class));

	private final ReactiveWebApplicationContextRunner reactiveRunner = new ReactiveWebApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(RateLimitAutoConfiguration.class));

	@Test
	void pinsTheDefaults() {
		RateLimitOverloadProperties properties = new RateLimitOverloadProperties();
		assertThat(properties.isEnabled()).isFalse();
		assertThat(properties.isShadow()).isFalse();
		assertThat(properties.getAlgorithm()).isEqualTo(AdaptiveLimits.VEGAS);
		assertThat(properties.getInitialLimit()).isEqualTo(20);
		assertThat(properties.getMinLimit()).isEqualTo(4);
		assertThat(properties.getMaxLimit()).isEqualTo(1000);
		assertThat(properties.getSlowCall()).isZero();
		assertThat(properties.getReserved().getCritical()).isEqualTo(0.2);
		assertThat(properties.getReserved().getNormal()).isEqualTo(0.1);
		assertThat(properties.getPaths()).isEmpty();
		assertThat(properties.getExcludePaths()).isEmpty();
		assertThat(properties.getPriorityHeader()).isEmpty();
		assertThat(properties.getDefaultPriority()).isEqualTo(RequestPriority.NORMAL);
		assertThat(properties.getPriorities()).isEmpty();
		assertThat(properties.getRetryAfter()).isEqualTo(Duration.ofSeconds(1));
		assertThat(properties.getCriticalWait()).isEqualTo(Duration.ofMillis(100));
	}

	@Test
	void isOffByDefault() {
		this.servletRunner.run((context) -> assertThat(context).hasNotFailed()
			.doesNotHaveBean(OverloadLimiter.class)
			.doesNotHaveBean(OverloadGate.class)
			.doesNotHaveBean(RateLimitOverloadConfiguration.FILTER_NAME)
			.doesNotHaveBean(RateLimitOverloadProperties.class));
		this.reactiveRunner
			.run((context) -> assertThat(context).hasNotFailed().doesNotHaveBean(OverloadWebFilter.class));
	}

	@Test
	void registersTheServletFilterAheadOfTheRouteFilterForRequestDispatches() {
		this.servletRunner.withPropertyValues("ratelimit.overload.enabled=true").run((context) -> {
			FilterRegistrationBean<?> registration = filter(context);
			assertThat(registration.getFilter()).isInstanceOf(OverloadFilter.class);
			assertThat(registration.getFilterName()).isEqualTo("rateLimitOverloadFilter");
			assertThat(registration.getOrder()).isEqualTo(-120).isLessThan(new RateLimitProperties().getFilterOrder());
			assertThat(registration.determineDispatcherTypes()).isEqualTo(java.util.EnumSet.of(DispatcherType.REQUEST));
			assertThat(context.getBean(OverloadLimiter.class).limit()).isEqualTo(20);
			assertThat(context.getBean(OverloadLimiter.class).shadow()).isFalse();
		});
	}

	@Test
	void registersTheWebFilterAheadOfTheRouteFilter() {
		this.reactiveRunner.withPropertyValues("ratelimit.overload.enabled=true", "ratelimit.overload.shadow=true")
			.run((context) -> {
				assertThat(context.getBean(OverloadWebFilter.class).getOrder()).isEqualTo(-120);
				assertThat(context.getBean(OverloadLimiter.class).shadow()).isTrue();
			});
	}

	@Test
	void registersMetersWhenTheApplicationHasAMeterRegistry() {
		this.servletRunner.withPropertyValues("ratelimit.overload.enabled=true", "ratelimit.overload.initial-limit=30")
			.withBean(MeterRegistry.class, SimpleMeterRegistry::new)
			.run((context) -> {
				assertThat(context).hasSingleBean(OverloadMetrics.class);
				MeterRegistry registry = context.getBean(MeterRegistry.class);
				assertThat(registry.get("ratelimit.overload.limit").gauge().value()).isEqualTo(30);
				assertThat(registry.get("ratelimit.overload.in.flight").gauge().value()).isZero();
				// by priority and reason: only critical requests wait, so only they have a queue and a wait
				assertThat(registry.get("ratelimit.overload.shed").functionCounters()).hasSize(5)
					.allSatisfy((counter) -> assertThat(counter.getId().getTag("result")).isEqualTo("shed"));
				assertThat(registry.get("ratelimit.overload.shed").tag("priority", "critical").functionCounters())
					.extracting((counter) -> counter.getId().getTag("reason"))
					.containsExactlyInAnyOrder("limit", "queue", "wait");
			});
		this.servletRunner.withPropertyValues("ratelimit.overload.enabled=true")
			.run((context) -> assertThat(context).doesNotHaveBean(OverloadMetrics.class));
	}

	@Test
	void showsTheLimitInTheEndpointOnlyWhenEnabled() {
		this.servletRunner.withPropertyValues("management.endpoints.web.exposure.include=ratelimits")
			.run((context) -> assertThat(endpoint(context).overload()).isNull());
		this.servletRunner
			.withPropertyValues("management.endpoints.web.exposure.include=ratelimits",
					"ratelimit.overload.enabled=true")
			.run((context) -> {
				RateLimitsEndpoint.LimitsDescriptor limits = endpoint(context);
				assertThat(limits.overload()).isNotNull();
				assertThat(limits.overload().algorithm()).isEqualTo("VEGAS");
				assertThat(limits.overload().limit()).isEqualTo(20);
				assertThat(limits.overload().shed()).containsOnlyKeys("critical", "normal", "sheddable");
			});
	}

	@Test
	void leavesANonWebApplicationAlone() {
		new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(RateLimitAutoConfiguration.class))
			.withPropertyValues("ratelimit.overload.enabled=true")
			.run((context) -> assertThat(context).hasNotFailed().doesNotHaveBean(OverloadLimiter.class));
	}

	@Test
	void failsWhenMinLimitIsZero() {
		assertConfigurationFailure("ratelimit.overload.min-limit=0", "ratelimit.overload.min-limit",
				"must be at least 1: 0");
	}

	@Test
	void failsWhenMaxLimitIsBelowMinLimit() {
		assertConfigurationFailure("ratelimit.overload.max-limit=3", "ratelimit.overload.max-limit",
				"must be at least min-limit (4): 3");
	}

	@Test
	void failsWhenInitialLimitIsOutsideTheBounds() {
		assertConfigurationFailure("ratelimit.overload.initial-limit=2000", "ratelimit.overload.initial-limit",
				"must be between min-limit and max-limit");
	}

	@Test
	void failsWhenTheReservesLeaveNothingForSheddableRequests() {
		assertConfigurationFailure("ratelimit.overload.reserved.critical=0.6", "ratelimit.overload.reserved",
				"sum to", "ratelimit.overload.reserved.normal=0.4");
		assertConfigurationFailure("ratelimit.overload.reserved.critical=-0.1", "ratelimit.overload.reserved.critical",
				"must be at least 0");
	}

	@Test
	void failsWhenRetryAfterIsZero() {
		assertConfigurationFailure("ratelimit.overload.retry-after=0s", "ratelimit.overload.retry-after",
				"must be positive");
	}

	@Test
	void failsWhenTheCriticalWaitIsNegative() {
		assertConfigurationFailure("ratelimit.overload.critical-wait=-1ms", "ratelimit.overload.critical-wait",
				"must not be negative");
	}

	@Test
	void givesTheCriticalWaitToTheLimiter() {
		this.servletRunner.withPropertyValues("ratelimit.overload.enabled=true", "ratelimit.overload.critical-wait=250ms")
			.run((context) -> assertThat(context.getBean(OverloadLimiter.class).criticalWaitNanos())
				.isEqualTo(Duration.ofMillis(250).toNanos()));
		this.servletRunner.withPropertyValues("ratelimit.overload.enabled=true", "ratelimit.overload.critical-wait=0")
			.run((context) -> assertThat(context.getBean(OverloadLimiter.class).criticalWaitNanos()).isZero());
	}

	@Test
	void failsWhenAPriorityRouteIsBroken() {
		assertConfigurationFailure("ratelimit.overload.priorities[0].path=/a/{", "ratelimit.overload.priorities[0].path",
				"is not a valid path pattern", "ratelimit.overload.priorities[0].priority=critical");
		assertConfigurationFailure("ratelimit.overload.priorities[0].path=/a", "ratelimit.overload.priorities[0].priority",
				"needs a priority");
		assertConfigurationFailure("ratelimit.overload.priorities[0].path=/a",
				"ratelimit.overload.priorities[0].methods", "'fetch' is not an HTTP method",
				"ratelimit.overload.priorities[0].priority=critical", "ratelimit.overload.priorities[0].methods=fetch");
	}

	@Test
	void failsWhenAnExcludedPathIsNotAPattern() {
		assertConfigurationFailure("ratelimit.overload.exclude-paths=/ok/**,/a/{", "ratelimit.overload.exclude-paths[1]",
				"is not a valid path pattern");
	}

	@Test
	void failsWhenTheAlgorithmIsUnknown() {
		this.servletRunner.withPropertyValues("ratelimit.overload.enabled=true", "ratelimit.overload.algorithm=bogus")
			.run((context) -> {
				assertThat(context).hasFailed();
				BindException exception = cause(context.getStartupFailure(), BindException.class);
				assertThat(exception.getName()).hasToString("ratelimit.overload.algorithm");
				FailureAnalysis analysis = RateLimitStartupValidationTests.analyzeAsBootDoes(context.getStartupFailure());
				assertThat(analysis.getDescription()).contains("ratelimit.overload.algorithm");
				assertThat(analysis.getAction()).contains("VEGAS", "GRADIENT2", "AIMD");
			});
	}

	@Test
	void failsOnATypoUnderOverloadEvenWhileItIsOff() {
		this.servletRunner.withPropertyValues("ratelimit.overload.min-limt=3").run((context) -> {
			assertThat(context).hasFailed();
			assertThat(context.getStartupFailure()).rootCause()
				.isInstanceOf(UnboundConfigurationPropertiesException.class);
			assertThat(RateLimitStartupValidationTests.analyzeAsBootDoes(context.getStartupFailure()).getDescription())
				.contains("ratelimit.overload.min-limt is not a known property; did you mean "
						+ "ratelimit.overload.min-limit?");
		});
		this.servletRunner.withPropertyValues("ratelimit.overload.enabled=true", "ratelimit.overload.reserved.critcal=0.3")
			.run((context) -> assertThat(
					RateLimitStartupValidationTests.analyzeAsBootDoes(context.getStartupFailure()).getDescription())
				.contains("did you mean ratelimit.overload.reserved.critical?"));
		this.servletRunner
			.withPropertyValues("ratelimit.overload.priorities[0].path=/a", "ratelimit.overload.priorities[0].prority=critical")
			.run((context) -> assertThat(
					RateLimitStartupValidationTests.analyzeAsBootDoes(context.getStartupFailure()).getDescription())
				.contains("did you mean ratelimit.overload.priorities[0].priority?"));
	}

	@Test
	void startsWithEveryPropertySet() {
		this.servletRunner
			.withPropertyValues("ratelimit.overload.enabled=true", "ratelimit.overload.shadow=true",
					"ratelimit.overload.algorithm=AIMD", "ratelimit.overload.initial-limit=10",
					"ratelimit.overload.min-limit=2", "ratelimit.overload.max-limit=50",
					"ratelimit.overload.slow-call=2s", "ratelimit.overload.reserved.critical=0.3",
					"ratelimit.overload.reserved.normal=0.2", "ratelimit.overload.paths=/api/**",
					"ratelimit.overload.exclude-paths=/api/internal/**", "ratelimit.overload.priority-header=X-Priority",
					"ratelimit.overload.default-priority=sheddable", "ratelimit.overload.priorities[0].path=/api/orders/**",
					"ratelimit.overload.priorities[0].methods=post", "ratelimit.overload.priorities[0].priority=critical",
					"ratelimit.overload.retry-after=5s")
			.run((context) -> assertThat(context).hasNotFailed().hasSingleBean(OverloadGate.class));
	}

	private void assertConfigurationFailure(String property, String origin, String reason, String... more) {
		this.servletRunner.withPropertyValues("ratelimit.overload.enabled=true", property)
			.withPropertyValues(more)
			.run((context) -> {
				assertThat(context).hasFailed();
				RateLimitConfigurationException exception = cause(context.getStartupFailure(),
						RateLimitConfigurationException.class);
				assertThat(exception.getOrigin()).isEqualTo(origin);
				assertThat(exception.getReason()).contains(reason);
				assertThat(exception.getAction()).isNotBlank();
				FailureAnalysis analysis = new RateLimitConfigurationFailureAnalyzer()
					.analyze(context.getStartupFailure());
				assertThat(analysis.getDescription()).contains(origin).contains(reason);
			});
	}

	private static FilterRegistrationBean<?> filter(AssertableWebApplicationContext context) {
		return (FilterRegistrationBean<?>) context.getBean(RateLimitOverloadConfiguration.FILTER_NAME);
	}

	private static RateLimitsEndpoint.LimitsDescriptor endpoint(AssertableWebApplicationContext context) {
		return (RateLimitsEndpoint.LimitsDescriptor) context.getBean(RateLimitsEndpoint.class).read(null, null);
	}

	private static <T extends Throwable> T cause(Throwable failure, Class<T> type) {
		for (Throwable candidate = failure; candidate != null; candidate = candidate.getCause()) {
			if (type.isInstance(candidate)) {
				return type.cast(candidate);
			}
		}
		throw new AssertionError("Expected a " + type.getSimpleName() + " in the causes of " + failure, failure);
	}

}
