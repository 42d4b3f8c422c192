package io.github.ratelimit.autoconfigure;

import java.time.Duration;
import java.time.ZoneId;
import java.time.ZonedDateTime;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.assertj.ApplicationContextAssertProvider;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.security.authentication.UsernamePasswordAuthenticationToken;
import org.springframework.security.core.authority.AuthorityUtils;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.CalendarPeriod;
import io.github.ratelimit.PlanResolver;
import io.github.ratelimit.RateLimitConfigurationException;
import io.github.ratelimit.internal.actuate.RateLimitsEndpoint;
import io.github.ratelimit.internal.core.LimitDefinition;
import io.github.ratelimit.internal.core.LimitResolver;
import io.github.ratelimit.internal.core.LimitSettings;
import io.github.ratelimit.internal.core.RateLimitClock;
import io.github.ratelimit.internal.pipeline.AuthorityPlanResolver;
import io.github.ratelimit.store.RateLimitStore;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Plans in configuration: their defaults and binding, the replaceable plan resolver, and
 * the startup failures of plans that could not share the policy's bucket.
 */
class PlansAutoConfigurationTests {

	private final ApplicationContextRunner contextRunner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(RateLimitAutoConfiguration.class));

	@Test
	void defaultsReadPlansFromAuthoritiesPrefixedPlanAndDefineNoPlans() {
		RateLimitProperties properties = new RateLimitProperties();
		assertThat(properties.getPlans().getAuthorityPrefix()).isEqualTo("PLAN_");
		assertThat(new RateLimitPolicyProperties().getPlans()).isEmpty();
	}

	@Test
	void bindsPlansWithRelaxedNames() {
		this.contextRunner
			.withPropertyValues("ratelimit.policies.api.capacity=100", "ratelimit.policies.api.period=1m",
					"ratelimit.policies.api.plans.pro.capacity=1000",
					"ratelimit.policies.api.plans.enterprise.refill-tokens=5000",
					"ratelimit.policies.api.plans.enterprise.capacity=10000")
			.run((context) -> {
				RateLimitPolicyProperties api = context.getBean(RateLimitProperties.class).getPolicies().get("api");
				assertThat(api.getPlans()).containsOnlyKeys("pro", "enterprise");
				assertThat(api.getPlans().get("enterprise").getRefillTokens()).isEqualTo(5_000);
				var definition = context.getBean(LimitResolver.class).resolve("api", LimitSettings.EMPTY, "test");
				assertThat(definition.limitFor("pro").capacity()).isEqualTo(1_000);
				assertThat(definition.limitFor("pro").period()).isEqualTo(Duration.ofMinutes(1));
				assertThat(definition.limitFor("enterprise").refillTokens()).isEqualTo(5_000);
				assertThat(definition.limitFor(null).capacity()).isEqualTo(100);
			});
	}

	@Test
	void calendarQuotaKeepsItsCalendarInEveryPlanAndTheEndpointShowsItsBoundary() {
		ZoneId berlin = ZoneId.of("Europe/Berlin");
		long now = TimeUnit.SECONDS.toMicros(ZonedDateTime.of(2026, 3, 28, 20, 0, 0, 0, berlin).toEpochSecond());
		this.contextRunner.withBean(RateLimitClock.class, () -> () -> now)
			.withPropertyValues("management.endpoints.web.exposure.include=ratelimits",
					"ratelimit.policies.daily.capacity=100", "ratelimit.policies.daily.calendar=day",
					"ratelimit.policies.daily.time-zone=Europe/Berlin", "ratelimit.policies.daily.plans.pro.capacity=1000")
			.run((context) -> {
				LimitDefinition daily = context.getBean(LimitResolver.class).resolve("daily", LimitSettings.EMPTY, "test");
				assertThat(daily.limit().algorithm()).as("a calendar implies a fixed window")
					.isEqualTo(Algorithm.FIXED_WINDOW);
				assertThat(daily.limitFor("pro").capacity()).isEqualTo(1_000);
				assertThat(daily.limitFor("pro").calendar()).isEqualTo(CalendarPeriod.DAY);
				assertThat(daily.limitFor("pro").timeZone()).isEqualTo(berlin);
				RateLimitsEndpoint endpoint = context.getBean(RateLimitsEndpoint.class);
				RateLimitsEndpoint.LimitDescriptor listed = ((RateLimitsEndpoint.LimitsDescriptor) endpoint.read(null,
						null))
					.limits()
					.get(0);
				assertThat(listed.algorithm()).isEqualTo("FIXED_WINDOW");
				assertThat(listed.calendar()).isEqualTo("DAY");
				assertThat(listed.timeZone()).isEqualTo("Europe/Berlin");
				assertThat(context.getBean(RateLimitStore.class).tryAcquire(daily.acquisitions("user:alice", "pro"))
					.allowed()).isTrue();
				RateLimitsEndpoint.BucketDescriptor bucket = ((RateLimitsEndpoint.IdentityDescriptor) endpoint
					.read("daily", "user:alice"))
					.buckets()
					.get(0);
				assertThat(bucket.remaining()).isEqualTo(99);
				// 20:00 to local midnight
				assertThat(bucket.reset()).isEqualTo(4 * 3_600);
			});
	}

	@Test
	void ratelimitsEndpointListsEachPlansValues() {
		this.contextRunner
			.withPropertyValues("management.endpoints.web.exposure.include=ratelimits",
					"ratelimit.policies.api.capacity=100", "ratelimit.policies.api.period=1m",
					"ratelimit.policies.api.plans.pro.capacity=1000",
					"ratelimit.policies.api.plans.slow.refill-tokens=10",
					"ratelimit.policies.api.plans.slow.period=1h", "ratelimit.policies.other.capacity=5")
			.run((context) -> {
				RateLimitsEndpoint.LimitsDescriptor limits = (RateLimitsEndpoint.LimitsDescriptor) context
					.getBean(RateLimitsEndpoint.class)
					.read(null, null);
				assertThat(limits.limits()).extracting(RateLimitsEndpoint.LimitDescriptor::name)
					.containsExactly("api", "other");
				RateLimitsEndpoint.LimitDescriptor api = limits.limits().get(0);
				assertThat(api.capacity()).isEqualTo(100);
				assertThat(api.plans()).containsOnlyKeys("pro", "slow");
				assertThat(api.plans().get("pro")).isEqualTo(new RateLimitsEndpoint.PlanDescriptor(1_000, 1_000, "PT1M"));
				assertThat(api.plans().get("slow")).isEqualTo(new RateLimitsEndpoint.PlanDescriptor(100, 10, "PT1H"));
				assertThat(limits.limits().get(1).plans()).isEmpty();
			});
	}

	@Test
	void defaultPlanResolverReadsAuthoritiesWithTheConfiguredPrefix() {
		this.contextRunner.withPropertyValues("ratelimit.plans.authority-prefix=TIER_").run((context) -> {
			PlanResolver resolver = context.getBean(PlanResolver.class);
			assertThat(resolver).isInstanceOf(AuthorityPlanResolver.class);
			assertThat(resolver.resolve(UsernamePasswordAuthenticationToken.authenticated("alice", "pw",
					AuthorityUtils.createAuthorityList("PLAN_pro", "TIER_gold")))).isEqualTo("gold");
		});
	}

	@Test
	void applicationPlanResolverReplacesTheDefault() {
		this.contextRunner.withBean(PlanResolver.class, () -> (principal) -> "enterprise")
			.run((context) -> assertThat(context.getBean(PlanResolver.class).resolve(null)).isEqualTo("enterprise"));
	}

	@Test
	void failsWhenAPlanChangesTheAlgorithm() {
		this.contextRunner
			.withPropertyValues("ratelimit.policies.api.capacity=100",
					"ratelimit.policies.api.plans.pro.algorithm=fixed-window",
					"ratelimit.policies.api.plans.pro.capacity=1000")
			.run((context) -> assertFailure(context, "ratelimit.policies.api.plans.pro.algorithm",
					"a plan cannot change the algorithm (" + Algorithm.TOKEN_BUCKET + " to " + Algorithm.FIXED_WINDOW));
	}

	@Test
	void failsWhenAPlanOfAFixedWindowChangesThePeriod() {
		this.contextRunner
			.withPropertyValues("ratelimit.policies.api.algorithm=fixed-window", "ratelimit.policies.api.capacity=100",
					"ratelimit.policies.api.period=1m", "ratelimit.policies.api.plans.pro.period=1h")
			.run((context) -> assertFailure(context, "ratelimit.policies.api.plans.pro.period",
					"cannot change the period"));
	}

	@Test
	void failsWhenAPlanCanNeverAdmitARequest() {
		this.contextRunner
			.withPropertyValues("ratelimit.policies.api.capacity=100", "ratelimit.policies.api.plans.pro.capacity=0")
			.run((context) -> assertFailure(context, "ratelimit.policies.api.plans.pro.capacity",
					"capacity must be positive: 0"));
	}

	@Test
	void failsWhenARouteDefinesPlans() {
		new WebApplicationContextRunner().withConfiguration(AutoConfigurations.of(RateLimitAutoConfiguration.class))
			.withPropertyValues("ratelimit.routes[0].path=/api/**", "ratelimit.routes[0].capacity=10",
					"ratelimit.routes[0].plans.pro.capacity=100")
			.run((context) -> assertFailure(context, "ratelimit.routes[0].plans",
					"plans belong to a policy, not to a route"));
	}

	@Test
	void failsWhenTheAuthorityPrefixIsEmpty() {
		this.contextRunner.withPropertyValues("ratelimit.plans.authority-prefix=")
			.run((context) -> assertFailure(context, "ratelimit.plans.authority-prefix", "must not be empty"));
	}

	private static void assertFailure(ApplicationContextAssertProvider<?> context, String property, String reason) {
		assertThat(context).hasFailed();
		Throwable cause = context.getStartupFailure();
		while (cause != null && !(cause instanceof RateLimitConfigurationException)) {
			cause = cause.getCause();
		}
		assertThat(cause).as("a RateLimitConfigurationException causing %s", context.getStartupFailure())
			.isInstanceOfSatisfying(RateLimitConfigurationException.class, (ex) -> {
				assertThat(ex.getOrigin()).isEqualTo(property);
				assertThat(ex.getReason()).contains(reason);
				assertThat(ex.getMessage()).startsWith(property + ": ");
			});
	}

}
