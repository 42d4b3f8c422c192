package io.github.ratelimit.autoconfigure;

import java.util.List;
import java.util.Objects;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.context.properties.bind.BindException;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.diagnostics.FailureAnalyzer;
import org.springframework.boot.http.converter.autoconfigure.HttpMessageConvertersAutoConfiguration;
import org.springframework.boot.test.context.assertj.ApplicationContextAssertProvider;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.boot.webmvc.autoconfigure.DispatcherServletAutoConfiguration;
import org.springframework.boot.webmvc.autoconfigure.WebMvcAutoConfiguration;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.core.io.support.SpringFactoriesLoader;
import org.springframework.core.io.support.SpringFactoriesLoader.FailureHandler;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.RestController;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.CalendarPeriod;
import io.github.ratelimit.RateLimitConfigurationException;
import io.github.ratelimit.RateLimited;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Every broken configuration fails the startup with a message naming where the bad value
 * is and how to fix it.
 */
class RateLimitStartupValidationTests {

	private final ApplicationContextRunner contextRunner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(RateLimitAutoConfiguration.class));

	private final ApplicationContextRunner aopContextRunner = this.contextRunner
		.withConfiguration(AutoConfigurations.of(AopAutoConfiguration.class));

	/** With Redis the store is built before the limit resolver; no connection is ever opened. */
	private final ApplicationContextRunner redisContextRunner = this.contextRunner.withBean(
			RedisConnectionFactory.class, () -> new LettuceConnectionFactory(new RedisStandaloneConfiguration("127.0.0.1", 1)));

	private final WebApplicationContextRunner webContextRunner = new WebApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(RateLimitAutoConfiguration.class));

	private final WebApplicationContextRunner mvcContextRunner = this.webContextRunner
		.withConfiguration(AutoConfigurations.of(AopAutoConfiguration.class, WebMvcAutoConfiguration.class,
				DispatcherServletAutoConfiguration.class, HttpMessageConvertersAutoConfiguration.class));

	@Test
	void startsWithValidConfiguration() {
		this.webContextRunner
			.withPropertyValues("ratelimit.policies.search.capacity=10", "ratelimit.policies.search.period=1m",
					"ratelimit.routes[0].path=/api/search/**", "ratelimit.routes[0].methods=get,post",
					"ratelimit.routes[0].policy=search", "ratelimit.routes[1].path=/api/{id}",
					"ratelimit.routes[1].capacity=5", "ratelimit.client-ip.trusted-proxies=10.0.0.0/8,fd00::/8")
			.run((context) -> assertThat(context).hasNotFailed());
	}

	@Test
	void failsWhenPolicyCapacityIsZero() {
		this.contextRunner.withPropertyValues("ratelimit.policies.x.capacity=0")
			.run((context) -> assertConfigurationFailure(context, "ratelimit.policies.x.capacity",
					"capacity must be positive: 0", "Set a capacity of at least 1"));
	}

	@Test
	void failsWhenPolicyCandidateCanNeverAdmit() {
		this.contextRunner
			.withPropertyValues("ratelimit.policies.search.capacity=5", "ratelimit.policies.search.candidate.capacity=0")
			.run((context) -> assertConfigurationFailure(context, "ratelimit.policies.search.candidate",
					"capacity must be positive: 0", "positive capacity"));
	}

	@Test
	void failsWhenPolicyCostExceedsCapacity() {
		this.contextRunner.withPropertyValues("ratelimit.policies.x.capacity=2", "ratelimit.policies.x.cost=3")
			.run((context) -> assertConfigurationFailure(context, "ratelimit.policies.x.cost",
					"cost 3 can never be admitted by capacity 2", "Use a cost between 1 and the capacity"));
	}

	@ParameterizedTest
	@ValueSource(strings = { "Tokens", "tokens used", "\"tokens\"", "7-bytes",
			"a-unit-name-much-longer-than-32-chars" })
	void failsWhenPolicyUnitIsNotAToken(String unit) {
		this.contextRunner.withPropertyValues("ratelimit.policies.chat.capacity=1000", "ratelimit.policies.chat.unit=" + unit)
			.run((context) -> assertConfigurationFailure(context, "ratelimit.policies.chat.unit",
					"is not a quota unit token", "Use a lowercase name of at most 32 letters, digits and dashes"));
	}

	@Test
	void failsWhenRouteUnitIsNotAToken() {
		this.webContextRunner
			.withPropertyValues("ratelimit.routes[0].path=/api/chat/**", "ratelimit.routes[0].capacity=1000",
					"ratelimit.routes[0].unit=LLM_tokens")
			.run((context) -> assertConfigurationFailure(context, "ratelimit.routes[0].unit",
					"unit 'LLM_tokens' is not a quota unit token", "such as tokens or content-bytes"));
	}

	@Test
	void failsWhenAnnotationUnitIsNotAToken() {
		this.aopContextRunner.withBean(BadUnitService.class)
			.run((context) -> assertConfigurationFailure(context,
					"@RateLimited on " + BadUnitService.class.getName() + ".call() (unit)",
					"unit 'Tokens' is not a quota unit token", "Use a lowercase name"));
	}

	@Test
	void failsWhenAConcurrencyLimitCountsAnotherUnit() {
		this.contextRunner
			.withPropertyValues("ratelimit.policies.exports.capacity=2", "ratelimit.policies.exports.algorithm=concurrency",
					"ratelimit.policies.exports.unit=tokens")
			.run((context) -> assertConfigurationFailure(context, "ratelimit.policies.exports.unit",
					"a concurrency limit counts calls in flight, so its unit is concurrent-requests: tokens",
					"Remove the unit"));
	}

	@Test
	void failsWhenARateLimitCountsConcurrentRequests() {
		this.contextRunner
			.withPropertyValues("ratelimit.policies.chat.capacity=2", "ratelimit.policies.chat.unit=concurrent-requests")
			.run((context) -> assertConfigurationFailure(context, "ratelimit.policies.chat.unit",
					"only a concurrency limit counts concurrent-requests, and this limit is a token-bucket",
					"set algorithm to concurrency"));
	}

	@Test
	void failsWhenPlacesOfOneLimitCountDifferentUnits() {
		this.aopContextRunner.withBean(ConflictingUnitsService.class).run((context) -> {
			String prefix = "@RateLimited on " + ConflictingUnitsService.class.getName();
			RateLimitConfigurationException failure = assertConfigurationFailure(context, null,
					"limit 'budget' is also defined at", "set the unit once in ratelimit.policies.budget.unit");
			assertThat(failure.getReason()).contains("counting tokens", "counting requests");
			assertThat(failure.getMessage()).contains(prefix + ".first()", prefix + ".second()");
		});
	}

	@Test
	void startsWhenAPolicyGivesTheUnitOfItsAnnotations() {
		this.aopContextRunner.withBean(ConflictingUnitsService.class)
			.withPropertyValues("ratelimit.policies.budget.unit=tokens")
			.run((context) -> assertThat(context).hasNotFailed());
	}

	@Test
	void failsWhenPolicyPeriodIsNegative() {
		this.contextRunner.withPropertyValues("ratelimit.policies.x.capacity=5", "ratelimit.policies.x.period=-5s")
			.run((context) -> assertConfigurationFailure(context, "ratelimit.policies.x.period", "PT-5S",
					"Use a positive duration"));
	}

	@Test
	void failsWhenPolicyPeriodIsNotADuration() {
		this.contextRunner.withPropertyValues("ratelimit.policies.x.capacity=5", "ratelimit.policies.x.period=abc")
			.run((context) -> assertBindFailure(context, "ratelimit.policies.x.period"));
	}

	@Test
	void failsWhenAlgorithmIsUnknown() {
		this.contextRunner.withPropertyValues("ratelimit.policies.x.capacity=5", "ratelimit.policies.x.algorithm=bogus")
			.run((context) -> {
				FailureAnalysis analysis = assertBindFailure(context, "ratelimit.policies.x.algorithm");
				assertThat(analysis.getAction()).contains("TOKEN_BUCKET", "SLIDING_WINDOW_COUNTER");
			});
	}

	@Test
	void failsWhenRouteNamesMissingPolicyWithoutCapacity() {
		this.webContextRunner
			.withPropertyValues("ratelimit.routes[0].path=/api/reports/**", "ratelimit.routes[0].policy=missing")
			.run((context) -> assertConfigurationFailure(context, "ratelimit.routes[0].policy",
					"no policy 'missing' is configured", "ratelimit.policies.missing"));
	}

	@Test
	void failsWhenRouteHasNeitherPolicyNorCapacity() {
		this.webContextRunner.withPropertyValues("ratelimit.routes[0].path=/api/reports/**")
			.run((context) -> assertConfigurationFailure(context, "ratelimit.routes[0]", "has no capacity",
					"Set a positive capacity"));
	}

	@Test
	void failsWhenRouteCostExceedsItsCapacity() {
		this.webContextRunner
			.withPropertyValues("ratelimit.routes[0].path=/api/reports/**", "ratelimit.routes[0].capacity=2",
					"ratelimit.routes[0].cost=3")
			.run((context) -> assertConfigurationFailure(context, "ratelimit.routes[0].cost",
					"cost 3 can never be admitted by capacity 2", "Use a cost between 1 and the capacity"));
	}

	@Test
	void failsWhenTrustedProxyIsNotACidr() {
		this.contextRunner.withPropertyValues("ratelimit.client-ip.trusted-proxies[0]=10.0.0.0/33")
			.run((context) -> assertConfigurationFailure(context, "ratelimit.client-ip.trusted-proxies[0]",
					"10.0.0.0/33", "Use an address or CIDR"));
	}

	@Test
	void failsWhenRoutePathIsNotAPattern() {
		this.webContextRunner
			.withPropertyValues("ratelimit.routes[0].path=/api/{id", "ratelimit.routes[0].capacity=5")
			.run((context) -> assertConfigurationFailure(context, "ratelimit.routes[0].path",
					"'/api/{id' is not a valid path pattern", "Use a Spring path pattern"));
	}

	@Test
	void failsWhenRouteMethodIsNotAnHttpMethod() {
		this.webContextRunner
			.withPropertyValues("ratelimit.routes[0].path=/api/**", "ratelimit.routes[0].capacity=5",
					"ratelimit.routes[0].methods=GET,FETCH")
			.run((context) -> assertConfigurationFailure(context, "ratelimit.routes[0].methods",
					"'FETCH' is not an HTTP method", "Use methods such as GET"));
	}

	@Test
	void failsWhenTenantPatternIsNotARegularExpression() {
		this.contextRunner.withPropertyValues("ratelimit.tenant.pattern=[a-z")
			.run((context) -> assertConfigurationFailure(context, "ratelimit.tenant.pattern",
					"'[a-z' is not a valid regular expression", "Use a bounded pattern"));
	}

	@ParameterizedTest
	@ValueSource(strings = { "0", "1.5", "-0.5" })
	void failsWhenFallbackFactorIsNotAShare(String factor) {
		this.contextRunner.withPropertyValues("ratelimit.fallback-factor=" + factor)
			.run((context) -> assertConfigurationFailure(context, "ratelimit.fallback-factor",
					"must be greater than 0 and at most 1", "Use a share such as 0.5"));
	}

	@Test
	void failsWhenIpv6PrefixLengthIsZero() {
		this.contextRunner.withPropertyValues("ratelimit.client-ip.ipv6-prefix-length=0")
			.run((context) -> assertConfigurationFailure(context, "ratelimit.client-ip.ipv6-prefix-length",
					"must be between 1 and 128: 0", "Use 64"));
	}

	@Test
	void failsWhenRedisStoreIsRequestedWithoutRedis() {
		this.contextRunner.withPropertyValues("ratelimit.store=redis")
			.run((context) -> assertConfigurationFailure(context, "ratelimit.store",
					"redis is selected but the application has no RedisConnectionFactory bean",
					"spring-boot-starter-data-redis"));
	}

	@Test
	void failsWhenRedisKeyPrefixOpensAHashTag() {
		this.contextRunner.withPropertyValues("ratelimit.redis.key-prefix={rl}:")
			.run((context) -> assertConfigurationFailure(context, "ratelimit.redis.key-prefix",
					"must not contain braces", "ratelimit:"));
	}

	@ParameterizedTest
	@ValueSource(strings = { "0", "0ms", "-250ms" })
	void failsWhenRedisTimeoutIsNotPositive(String timeout) {
		for (ApplicationContextRunner runner : List.of(this.contextRunner, this.redisContextRunner)) {
			runner.withPropertyValues("ratelimit.redis.timeout=" + timeout)
				.run((context) -> assertConfigurationFailure(context, "ratelimit.redis.timeout", "must be positive",
						"Use a short duration such as 250ms"));
		}
	}

	@ParameterizedTest
	@ValueSource(strings = { "0", "-1" })
	void failsWhenRedisFailureThresholdIsBelowOne(String threshold) {
		for (ApplicationContextRunner runner : List.of(this.contextRunner, this.redisContextRunner)) {
			runner.withPropertyValues("ratelimit.redis.failure-threshold=" + threshold)
				.run((context) -> assertConfigurationFailure(context, "ratelimit.redis.failure-threshold",
						"must be at least 1: " + threshold, "Use a small count such as 5"));
		}
	}

	@ParameterizedTest
	@ValueSource(strings = { "0", "-5s" })
	void failsWhenRedisProbeIntervalIsNotPositive(String interval) {
		for (ApplicationContextRunner runner : List.of(this.contextRunner, this.redisContextRunner)) {
			runner.withPropertyValues("ratelimit.redis.probe-interval=" + interval)
				.run((context) -> assertConfigurationFailure(context, "ratelimit.redis.probe-interval",
						"must be positive", "Use a duration such as 5s"));
		}
	}

	@ParameterizedTest
	@ValueSource(strings = { "0", "500us", "2s" })
	void failsWhenRedisSyncIntervalIsOutsideOneMillisecondToOneSecond(String interval) {
		for (ApplicationContextRunner runner : List.of(this.contextRunner, this.redisContextRunner)) {
			runner.withPropertyValues("ratelimit.redis.mode=local-first", "ratelimit.redis.sync-interval=" + interval)
				.run((context) -> assertConfigurationFailure(context, "ratelimit.redis.sync-interval",
						"must be between 1ms and 1s", "Use a short duration such as 10ms"));
		}
	}

	@Test
	void failsWhenRedisExactLimitsNameABlankLimit() {
		this.redisContextRunner
			.withPropertyValues("ratelimit.redis.exact-limits[0]=login-username", "ratelimit.redis.exact-limits[1]= ")
			.run((context) -> assertConfigurationFailure(context, "ratelimit.redis.exact-limits",
					"must not contain a blank name", "login-username"));
	}

	@Test
	void failsWhenRedisModeIsUnknown() {
		this.redisContextRunner.withPropertyValues("ratelimit.redis.mode=eventually")
			.run((context) -> assertThat(context).hasFailed()
				.getFailure()
				.hasStackTraceContaining("ratelimit.redis.mode"));
	}

	@Test
	void failsWhenRedisKeyLayoutIsUnknown() {
		this.redisContextRunner.withPropertyValues("ratelimit.redis.key-layout=hash-per-identity")
			.run((context) -> assertThat(context).hasFailed()
				.getFailure()
				.hasStackTraceContaining("ratelimit.redis.key-layout"));
	}

	@Test
	void failsWhenRedisKeyPrefixHasBracesAndTheRedisStoreIsBuilt() {
		this.redisContextRunner.withPropertyValues("ratelimit.redis.key-prefix=rl}:")
			.run((context) -> assertConfigurationFailure(context, "ratelimit.redis.key-prefix",
					"must not contain braces", "ratelimit:"));
	}

	@Test
	void failsWhenRedisTimeoutIsNotADuration() {
		this.contextRunner.withPropertyValues("ratelimit.redis.timeout=soon")
			.run((context) -> assertBindFailure(context, "ratelimit.redis.timeout"));
	}

	@Test
	void failsWhenTenantHeaderIsEmpty() {
		this.contextRunner.withPropertyValues("ratelimit.tenant.header=")
			.run((context) -> assertConfigurationFailure(context, "ratelimit.tenant.header", "must not be empty",
					"such as X-Tenant-Id"));
	}

	@ParameterizedTest
	@ValueSource(strings = { "X-Tenant Id", "X-Tenant-Id:", "X\tTenant", "{tenant}", "X-T\u00e9nant" })
	void failsWhenTenantHeaderIsNotAHeaderName(String header) {
		this.contextRunner.withPropertyValues("ratelimit.tenant.header=" + header)
			.run((context) -> assertConfigurationFailure(context, "ratelimit.tenant.header",
					"is not an HTTP header name", "such as X-Tenant-Id"));
	}

	@ParameterizedTest
	@ValueSource(strings = { "0", "-1" })
	void failsWhenMemoryMaximumKeysIsNotPositive(String maximumKeys) {
		for (ApplicationContextRunner runner : List.of(this.contextRunner, this.redisContextRunner)) {
			runner.withPropertyValues("ratelimit.memory.maximum-keys=" + maximumKeys)
				.run((context) -> assertConfigurationFailure(context, "ratelimit.memory.maximum-keys",
						"must be positive: " + maximumKeys, "Use a bound such as 100000"));
		}
	}

	@Test
	void failsWhenDefaultKeyIsEmpty() {
		this.contextRunner.withPropertyValues("ratelimit.default-key=")
			.run((context) -> assertConfigurationFailure(context, "ratelimit.default-key",
					"the default key chain is empty", "List at least one of principal, tenant, ip, global"));
	}

	@Test
	void failsWhenDefaultKeyNamesAnUnknownSource() {
		this.contextRunner.withPropertyValues("ratelimit.default-key=principal,session")
			.run((context) -> assertBindFailure(context, "ratelimit.default-key"));
	}

	@Test
	void failsWhenPolicyKeyNamesAnUnknownSource() {
		this.contextRunner.withPropertyValues("ratelimit.policies.x.capacity=5", "ratelimit.policies.x.key=user")
			.run((context) -> assertBindFailure(context, "ratelimit.policies.x.key"));
	}

	@Test
	void failsWhenPolicyRefillTokensIsNegative() {
		this.contextRunner.withPropertyValues("ratelimit.policies.x.capacity=5", "ratelimit.policies.x.refill-tokens=-1")
			.run((context) -> assertConfigurationFailure(context, "ratelimit.policies.x.refill-tokens",
					"refill-tokens must not be negative: -1", "Use 0 (refill the capacity)"));
	}

	@Test
	void failsWhenFailModeIsUnknown() {
		this.contextRunner.withPropertyValues("ratelimit.fail-mode=bogus")
			.run((context) -> assertBindFailure(context, "ratelimit.fail-mode"));
	}

	@Test
	void failsWhenPolicyFailModeIsUnknown() {
		this.contextRunner.withPropertyValues("ratelimit.policies.login.capacity=5",
				"ratelimit.policies.login.fail-mode=bogus")
			.run((context) -> {
				FailureAnalysis analysis = assertBindFailure(context, "ratelimit.policies.login.fail-mode");
				assertThat(analysis.getAction()).contains("OPEN", "CLOSED");
			});
	}

	@Test
	void failsWhenRouteFailModeIsUnknown() {
		this.webContextRunner
			.withPropertyValues("ratelimit.routes[0].path=/login", "ratelimit.routes[0].capacity=5",
					"ratelimit.routes[0].fail-mode=shut")
			.run((context) -> assertBindFailure(context, "ratelimit.routes[0].fail-mode"));
	}

	@Test
	void failsWhenHeaderStyleIsUnknown() {
		this.contextRunner.withPropertyValues("ratelimit.headers=bogus").run((context) -> {
			FailureAnalysis analysis = assertBindFailure(context, "ratelimit.headers");
			assertThat(analysis.getAction()).contains("IETF", "X_RATELIMIT");
		});
	}

	@Test
	void failsWhenStoreIsUnknown() {
		this.contextRunner.withPropertyValues("ratelimit.store=bogus").run((context) -> {
			FailureAnalysis analysis = assertBindFailure(context, "ratelimit.store");
			assertThat(analysis.getAction()).contains("AUTO", "MEMORY", "REDIS");
		});
	}

	@Test
	void failsWhenFallbackFactorIsNotANumber() {
		this.contextRunner.withPropertyValues("ratelimit.fallback-factor=half")
			.run((context) -> assertBindFailure(context, "ratelimit.fallback-factor"));
	}

	@ParameterizedTest
	@ValueSource(strings = { "localhost", "proxy.example.com", "gateway" })
	void failsWhenTrustedProxyIsAHostNameWithoutLookingItUp(String host) {
		// were "localhost" looked up it would parse as 127.0.0.1 and start
		this.contextRunner.withPropertyValues("ratelimit.client-ip.trusted-proxies=10.0.0.0/8," + host)
			.run((context) -> assertConfigurationFailure(context, "ratelimit.client-ip.trusted-proxies[1]",
					"host names are not accepted", "Use an address or CIDR"));
	}

	@Test
	void failsWhenIpv6PrefixLengthIsAbove128() {
		this.contextRunner.withPropertyValues("ratelimit.client-ip.ipv6-prefix-length=129")
			.run((context) -> assertConfigurationFailure(context, "ratelimit.client-ip.ipv6-prefix-length",
					"must be between 1 and 128: 129", "Use 64"));
	}

	@Test
	void failsWhenEnabledIsNotABoolean() {
		this.contextRunner.withPropertyValues("ratelimit.enabled=ture")
			.run((context) -> assertBindFailure(context, "ratelimit.enabled"));
	}

	@Test
	void failsWhenAnnotationNamesMissingPolicyWithoutCapacity() {
		this.aopContextRunner.withBean(MissingPolicyService.class)
			.run((context) -> assertConfigurationFailure(context,
					"@RateLimited on " + MissingPolicyService.class.getName() + ".call()",
					"limit 'missing' has no capacity and no policy 'missing' is configured",
					"ratelimit.policies.missing.capacity"));
	}

	@Test
	void failsWhenNameAndItsAliasValueDiffer() {
		this.aopContextRunner.withBean(TwoNamesService.class)
			.run((context) -> assertConfigurationFailure(context,
					"@RateLimited on " + TwoNamesService.class.getName() + ".call()",
					"name 'orders' and value 'search' differ", "value is an alias of name"));
	}

	@Test
	void failsWhenUnnamedLimitHasNoCapacityAndAdvisesAPropertyThatBinds() {
		// the fix it advises is applied in RateLimitAutoConfigurationTests
		this.aopContextRunner.withBean(UnnamedService.class)
			.run((context) -> assertConfigurationFailure(context,
					"@RateLimited on " + UnnamedService.class.getName() + ".call()",
					"limit 'UnnamedService.call' has no capacity",
					"configure ratelimit.policies[UnnamedService.call].capacity"));
	}

	@Test
	void namesPolicyWithBracketsWhenItsNameIsNotAPlainProperty() {
		this.contextRunner.withPropertyValues("ratelimit.policies[GET /x].capacity=0")
			.run((context) -> assertConfigurationFailure(context, "ratelimit.policies[GET /x].capacity",
					"capacity must be positive: 0", "Set a capacity of at least 1"));
	}

	@Test
	void failsWhenAnnotationPeriodIsNotADuration() {
		this.aopContextRunner.withBean(UnparseablePeriodService.class)
			.run((context) -> assertConfigurationFailure(context,
					"@RateLimited on " + UnparseablePeriodService.class.getName() + ".call() (period)",
					"'soon' is not a duration", "Use a duration such as"));
	}

	@Test
	void failsWhenAnnotationMaxWaitIsNotADuration() {
		this.aopContextRunner.withBean(UnparseableMaxWaitService.class)
			.run((context) -> assertConfigurationFailure(context,
					"@RateLimited on " + UnparseableMaxWaitService.class.getName() + ".call() (maxWait)",
					"'a while' is not a duration", "Use a duration such as \"2s\""));
	}

	@Test
	void failsWhenAnnotationMaxWaitIsNegative() {
		this.aopContextRunner.withBean(NegativeMaxWaitService.class)
			.run((context) -> assertConfigurationFailure(context,
					"@RateLimited on " + NegativeMaxWaitService.class.getName() + ".call() (max-wait)",
					"max-wait must be between 0 and PT24H: PT-1S", "Use 0 (never wait)"));
	}

	@Test
	void failsWhenPolicyMaxWaitIsNegative() {
		this.contextRunner.withPropertyValues("ratelimit.policies.sms.capacity=50", "ratelimit.policies.sms.max-wait=-2s")
			.run((context) -> assertConfigurationFailure(context, "ratelimit.policies.sms.max-wait",
					"max-wait must be between 0 and PT24H: PT-2S", "Use 0 (never wait)"));
	}

	@Test
	void failsWhenPolicyMaxWaitIsLongerThanADay() {
		this.contextRunner.withPropertyValues("ratelimit.policies.sms.capacity=50", "ratelimit.policies.sms.max-wait=2d")
			.run((context) -> assertConfigurationFailure(context, "ratelimit.policies.sms.max-wait",
					"max-wait must be between 0 and PT24H: PT48H", "a longer backlog belongs in a queue"));
	}

	@Test
	void failsWhenRouteSetsMaxWait() {
		this.webContextRunner
			.withPropertyValues("ratelimit.routes[0].path=/api/reports/**", "ratelimit.routes[0].capacity=5",
					"ratelimit.routes[0].max-wait=1s")
			.run((context) -> assertConfigurationFailure(context, "ratelimit.routes[0].max-wait",
					"route limits never wait", "set maxWait on its @RateLimited"));
	}

	@Test
	void failsWhenAnnotationKeyExpressionIsInvalid() {
		this.aopContextRunner.withBean(InvalidKeyExpressionService.class)
			.run((context) -> assertConfigurationFailure(context,
					"@RateLimited on " + InvalidKeyExpressionService.class.getName() + ".call(String) (keyExpression)",
					"'#a +' is not a valid SpEL expression", "Use an expression over the method arguments"));
	}

	@Test
	void failsWhenAnnotationCostExceedsCapacity() {
		this.aopContextRunner.withBean(CostAboveCapacityService.class)
			.run((context) -> assertConfigurationFailure(context,
					"@RateLimited on " + CostAboveCapacityService.class.getName() + ".call() (cost)",
					"cost 3 can never be admitted by capacity 2", "Use a cost between 1 and the capacity"));
	}

	@Test
	void failsWithoutAopWhenAnnotationIsInvalid() {
		this.contextRunner.withBean(CostAboveCapacityService.class)
			.run((context) -> assertConfigurationFailure(context,
					"@RateLimited on " + CostAboveCapacityService.class.getName() + ".call() (cost)",
					"cost 3 can never be admitted by capacity 2", "Use a cost between 1 and the capacity"));
	}

	@Test
	void failsWhenPolicyMakesAnnotationInvalidAndNamesThePolicy() {
		this.aopContextRunner.withBean(SharedLimitService.class)
			.withPropertyValues("ratelimit.policies.shared.cost=9")
			.run((context) -> assertConfigurationFailure(context, "ratelimit.policies.shared.cost",
					"cost 9 can never be admitted by capacity 5", "Use a cost between 1 and the capacity"));
	}

	@Test
	void failsWhenAnnotationsShareANameWithDifferentLimits() {
		this.aopContextRunner.withBean(ConflictingLimitsService.class).run((context) -> {
			String prefix = "@RateLimited on " + ConflictingLimitsService.class.getName();
			RateLimitConfigurationException failure = assertConfigurationFailure(context, null,
					"limit 'shared' is also defined at", "Give the limits different names");
			assertThat(failure.getMessage()).contains(prefix + ".first()", prefix + ".second()");
			assertThat(failure.getReason()).contains("capacity=5", "capacity=6");
		});
	}

	@Test
	void startsWhenAnnotationsShareANameAndAgree() {
		this.aopContextRunner.withBean(SharedLimitService.class).run((context) -> assertThat(context).hasNotFailed());
	}

	@Test
	void failsWhenUnnamedControllerLimitIsInvalid() {
		this.mvcContextRunner.withUserConfiguration(BrokenController.class)
			.run((context) -> assertConfigurationFailure(context,
					"@RateLimited on " + BrokenController.class.getName() + ".order(String) (cost)",
					"cost 3 can never be admitted by capacity 2", "Use a cost between 1 and the capacity"));
	}

	@Test
	void failsWhenUnnamedControllerLimitHasNoCapacity() {
		this.mvcContextRunner.withUserConfiguration(NoCapacityController.class)
			.run((context) -> assertConfigurationFailure(context,
					"@RateLimited on " + NoCapacityController.class.getName() + ".order(String)",
					"limit 'GET /orders/{id}' has no capacity", "ratelimit.policies[GET /orders/{id}].capacity"));
	}

	@Test
	void startsWithValidController() {
		this.mvcContextRunner.withUserConfiguration(ValidController.class)
			.run((context) -> assertThat(context).hasNotFailed());
	}

	@Test
	void failsWhenCalendarIsCombinedWithAnotherAlgorithm() {
		this.contextRunner
			.withPropertyValues("ratelimit.policies.daily.capacity=100", "ratelimit.policies.daily.calendar=day",
					"ratelimit.policies.daily.algorithm=token-bucket")
			.run((context) -> assertConfigurationFailure(context, "ratelimit.policies.daily.calendar",
					"a calendar quota is a fixed window: calendar day cannot be combined with algorithm token-bucket"
							+ " (set by ratelimit.policies.daily.algorithm)",
					"Remove the algorithm (a calendar implies fixed-window)"));
	}

	@Test
	void failsWhenCalendarIsCombinedWithAPeriod() {
		this.webContextRunner
			.withPropertyValues("ratelimit.routes[0].path=/api/**", "ratelimit.routes[0].capacity=100",
					"ratelimit.routes[0].calendar=month", "ratelimit.routes[0].period=30d")
			.run((context) -> assertConfigurationFailure(context, "ratelimit.routes[0].period",
					"a calendar quota's window is the calendar month, so it takes no period: PT720H",
					"Remove the period, or remove the calendar"));
	}

	@Test
	void failsWhenTimeZoneIsSetWithoutCalendar() {
		this.contextRunner
			.withPropertyValues("ratelimit.policies.daily.capacity=100", "ratelimit.policies.daily.time-zone=Europe/Berlin")
			.run((context) -> assertConfigurationFailure(context, "ratelimit.policies.daily.time-zone",
					"time-zone Europe/Berlin applies to calendar quotas only", "Set calendar to day, week or month"));
	}

	@Test
	void failsWhenTimeZoneIsUnknown() {
		this.contextRunner
			.withPropertyValues("ratelimit.policies.daily.capacity=100", "ratelimit.policies.daily.calendar=day",
					"ratelimit.policies.daily.time-zone=Europe/Berlim")
			.run((context) -> assertBindFailure(context, "ratelimit.policies.daily.time-zone"));
	}

	@Test
	void failsWhenCalendarIsUnknown() {
		this.contextRunner
			.withPropertyValues("ratelimit.policies.daily.capacity=100", "ratelimit.policies.daily.calendar=fortnight")
			.run((context) -> assertBindFailure(context, "ratelimit.policies.daily.calendar"));
	}

	@Test
	void failsWhenAPlanChangesTheWindowOfACalendarQuota() {
		this.contextRunner
			.withPropertyValues("ratelimit.policies.daily.capacity=100", "ratelimit.policies.daily.calendar=day",
					"ratelimit.policies.daily.plans.pro.capacity=1000", "ratelimit.policies.daily.plans.pro.period=1h")
			.run((context) -> assertConfigurationFailure(context, "ratelimit.policies.daily.plans.pro.period",
					"a plan cannot change the window of a calendar quota, the calendar day",
					"change the capacity instead"));
	}

	@Test
	void failsWhenAPolicyCountsAStatusClassThatDoesNotExist() {
		this.contextRunner
			.withPropertyValues("ratelimit.policies.logins.capacity=5", "ratelimit.policies.logins.count-statuses=401,7xx")
			.run((context) -> assertConfigurationFailure(context, "ratelimit.policies.logins.count-statuses",
					"'7xx' is neither a status code from 100 to 599 nor a status class from 1xx to 5xx",
					"Use status codes such as 401 and 403, or classes such as 4xx and 5xx"));
	}

	@Test
	void failsWhenAPolicyWithoutCapacityCountsSomethingThatIsNoStatus() {
		this.contextRunner.withPropertyValues("ratelimit.policies.logins.count-statuses=40x")
			.run((context) -> assertConfigurationFailure(context, "ratelimit.policies.logins.count-statuses",
					"'40x' is neither a status code", "Use status codes such as 401"));
	}

	@Test
	void failsWhenARouteCountsSomethingThatIsNoStatus() {
		this.webContextRunner
			.withPropertyValues("ratelimit.routes[0].path=/login", "ratelimit.routes[0].capacity=5",
					"ratelimit.routes[0].key=ip", "ratelimit.routes[0].count-statuses=abc")
			.run((context) -> assertConfigurationFailure(context, "ratelimit.routes[0].count-statuses",
					"'abc' is neither a status code", "Use status codes such as 401"));
	}

	@Test
	void failsWhenAnnotationTimeZoneIsUnknown() {
		this.aopContextRunner.withBean(UnknownTimeZoneService.class)
			.run((context) -> assertConfigurationFailure(context,
					"@RateLimited on " + UnknownTimeZoneService.class.getName() + ".call() (timeZone)",
					"'Mars/Olympus' is not a time zone", "Use a region such as \"Europe/Berlin\""));
	}

	@Test
	void failsWhenAnnotationCombinesCalendarWithAPeriod() {
		this.aopContextRunner.withBean(CalendarWithPeriodService.class)
			.run((context) -> assertConfigurationFailure(context,
					"@RateLimited on " + CalendarWithPeriodService.class.getName() + ".call() (period)",
					"a calendar quota's window is the calendar week, so it takes no period: PT1H",
					"Remove the period"));
	}

	@Test
	void failsWhenAConcurrencyLimitCountsOutcomes() {
		this.aopContextRunner.withBean(CountingConcurrencyService.class)
			.run((context) -> assertConfigurationFailure(context,
					"@RateLimited on " + CountingConcurrencyService.class.getName()
							+ ".call() (countExceptions, countWhen)",
					"a concurrency limit gives back every call's permit when it completes", "Remove countExceptions"));
	}

	@Test
	void failsWhenAConcurrencyPolicyCountsStatuses() {
		this.contextRunner
			.withPropertyValues("ratelimit.policies.exports.algorithm=concurrency",
					"ratelimit.policies.exports.capacity=2", "ratelimit.policies.exports.count-statuses=5xx")
			.run((context) -> assertConfigurationFailure(context, "ratelimit.policies.exports.count-statuses",
					"a concurrency limit gives back every call's permit when it completes, so no status counts",
					"Remove count-statuses"));
	}

	@Test
	void failsWhenACandidateIsOfAnotherKindThanItsPolicy() {
		this.contextRunner
			.withPropertyValues("ratelimit.policies.exports.algorithm=concurrency",
					"ratelimit.policies.exports.capacity=2", "ratelimit.policies.exports.candidate.algorithm=token-bucket")
			.run((context) -> assertConfigurationFailure(context, "ratelimit.policies.exports.candidate.algorithm",
					"a candidate counts what its policy counts", "same kind"));
	}

	@Test
	void failsWhenAConcurrencyLimitHoldsMoreThanItsStateAllows() {
		this.contextRunner
			.withPropertyValues("ratelimit.policies.exports.algorithm=concurrency",
					"ratelimit.policies.exports.capacity=100001")
			.run((context) -> assertConfigurationFailure(context, "ratelimit.policies.exports.capacity",
					"at most 100000", "smaller capacity"));
	}

	@Test
	void registersTheFailureAnalyzer() {
		this.contextRunner.withPropertyValues("ratelimit.store=redis").run((context) -> {
			FailureAnalysis analysis = analyzeAsBootDoes(context.getStartupFailure());
			assertThat(analysis.getDescription()).startsWith("Invalid rate limit configuration at ratelimit.store");
		});
	}

	/**
	 * Asserts that the context failed because of a {@link RateLimitConfigurationException}
	 * naming the origin (when not {@code null}) and how to fix it, and that the failure
	 * analysis shown at startup carries both.
	 */
	private static RateLimitConfigurationException assertConfigurationFailure(
			ApplicationContextAssertProvider<?> context, String origin, String reason, String action) {
		assertThat(context).hasFailed();
		Throwable failure = context.getStartupFailure();
		RateLimitConfigurationException exception = cause(failure, RateLimitConfigurationException.class);
		if (origin != null) {
			assertThat(exception.getOrigin()).isEqualTo(origin);
			assertThat(exception.getMessage()).startsWith(origin + ": ");
		}
		assertThat(exception.getReason()).contains(reason);
		assertThat(exception.getAction()).contains(action);
		assertThat(exception.getMessage()).contains(exception.getAction());
		FailureAnalysis analysis = new RateLimitConfigurationFailureAnalyzer().analyze(failure);
		assertThat(analysis).isNotNull();
		assertThat(analysis.getDescription()).contains(exception.getOrigin()).contains(reason);
		assertThat(analysis.getAction()).isNotBlank().isEqualTo(exception.getAction());
		assertThat(analysis.getCause()).isSameAs(exception);
		return exception;
	}

	/**
	 * Asserts that the context failed binding a property, and that Boot's failure analysis
	 * names it and says how to fix it.
	 */
	private static FailureAnalysis assertBindFailure(ApplicationContextAssertProvider<?> context, String property) {
		assertThat(context).hasFailed();
		Throwable failure = context.getStartupFailure();
		BindException exception = cause(failure, BindException.class);
		assertThat(exception.getName()).hasToString(property);
		assertThat(exception.getMessage()).contains(property);
		assertThat(new RateLimitConfigurationFailureAnalyzer().analyze(failure))
			.as("binding failures are left to Boot's analyzer")
			.isNull();
		FailureAnalysis analysis = analyzeAsBootDoes(failure);
		assertThat(analysis.getDescription()).contains(property);
		assertThat(analysis.getAction()).isNotBlank();
		return analysis;
	}

	/** Runs the failure analyzers registered in {@code spring.factories}, as Boot does at startup. */
	static FailureAnalysis analyzeAsBootDoes(Throwable failure) {
		return SpringFactoriesLoader.forDefaultResourceLocation(RateLimitStartupValidationTests.class.getClassLoader())
			.load(FailureAnalyzer.class, FailureHandler.handleMessage((message, ex) -> {
			}))
			.stream()
			.map((analyzer) -> analyzer.analyze(failure))
			.filter(Objects::nonNull)
			.findFirst()
			.orElseThrow(() -> new AssertionError("No failure analysis for " + failure));
	}

	private static <T extends Throwable> T cause(Throwable failure, Class<T> type) {
		for (Throwable candidate = failure; candidate != null; candidate = candidate.getCause()) {
			if (type.isInstance(candidate)) {
				return type.cast(candidate);
			}
		}
		throw new AssertionError("Expected a " + type.getSimpleName() + " in the causes of " + failure, failure);
	}

	static class MissingPolicyService {

		@RateLimited("missing")
		public void call() {
		}

	}

	static class TwoNamesService {

		@RateLimited(value = "search", name = "orders", capacity = 5)
		public void call() {
		}

	}

	static class UnnamedService {

		@RateLimited
		public void call() {
		}

	}

	static class UnknownTimeZoneService {

		@RateLimited(capacity = 5, calendar = CalendarPeriod.DAY, timeZone = "Mars/Olympus")
		public void call() {
		}

	}

	static class CountingConcurrencyService {

		@RateLimited(algorithm = Algorithm.CONCURRENCY, capacity = 2, countExceptions = IllegalStateException.class)
		public void call() {
		}

	}

	static class CalendarWithPeriodService {

		@RateLimited(capacity = 5, calendar = CalendarPeriod.WEEK, period = "1h")
		public void call() {
		}

	}

	static class UnparseablePeriodService {

		@RateLimited(capacity = 5, period = "soon")
		public void call() {
		}

	}

	static class UnparseableMaxWaitService {

		@RateLimited(capacity = 5, maxWait = "a while")
		public void call() {
		}

	}

	static class NegativeMaxWaitService {

		@RateLimited(capacity = 5, maxWait = "-1s")
		public void call() {
		}

	}

	static class InvalidKeyExpressionService {

		@RateLimited(capacity = 5, keyExpression = "#a +")
		public void call(String a) {
		}

	}

	static class CostAboveCapacityService {

		@RateLimited(capacity = 2, cost = 3)
		public void call() {
		}

	}

	static class ConflictingLimitsService {

		@RateLimited(name = "shared", capacity = 5)
		public void first() {
		}

		@RateLimited(name = "shared", capacity = 6)
		public void second() {
		}

	}

	static class BadUnitService {

		@RateLimited(name = "bad-unit", capacity = 5, unit = "Tokens")
		public void call() {
		}

	}

	static class ConflictingUnitsService {

		@RateLimited(name = "budget", capacity = 1000, cost = 10, unit = "tokens")
		public void first() {
		}

		@RateLimited(name = "budget", capacity = 1000, cost = 20)
		public void second() {
		}

	}

	static class SharedLimitService {

		@RateLimited(name = "shared", capacity = 5)
		public void first() {
		}

		@RateLimited(name = "shared", capacity = 5, cost = 2)
		public void second() {
		}

	}

	@RestController
	static class BrokenController {

		@RateLimited(capacity = 2, cost = 3)
		@GetMapping("/orders/{id}")
		String order(@PathVariable String id) {
			return id;
		}

	}

	@RestController
	static class NoCapacityController {

		@RateLimited
		@GetMapping("/orders/{id}")
		String order(@PathVariable String id) {
			return id;
		}

	}

	@RestController
	static class ValidController {

		@RateLimited(capacity = 5, period = "1m")
		@RateLimited(capacity = 100, period = "1h")
		@GetMapping("/orders/{id}")
		String order(@PathVariable String id) {
			return id;
		}

	}

}
