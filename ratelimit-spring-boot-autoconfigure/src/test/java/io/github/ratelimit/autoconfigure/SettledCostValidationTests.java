package io.github.ratelimit.autoconfigure;

import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.test.context.assertj.ApplicationContextAssertProvider;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.RateLimitConfigurationException;
import io.github.ratelimit.RateLimited;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Estimates, actual costs and actual cost headers that can never work fail the startup,
 * naming the annotation or property they are written in.
 */
class SettledCostValidationTests {

	private final ApplicationContextRunner contextRunner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(RateLimitAutoConfiguration.class));

	private final ApplicationContextRunner aopContextRunner = this.contextRunner
		.withConfiguration(AutoConfigurations.of(AopAutoConfiguration.class));

	private final WebApplicationContextRunner webContextRunner = new WebApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(RateLimitAutoConfiguration.class));

	@Test
	void startsWithSettlingPolicyAndAnnotation() {
		this.webContextRunner.withConfiguration(AutoConfigurations.of(AopAutoConfiguration.class))
			.withBean(SettlingService.class)
			.withPropertyValues("ratelimit.policies.tokens.capacity=1000", "ratelimit.policies.tokens.estimate=#request",
					"ratelimit.policies.tokens.actual-cost=#result.length()",
					"ratelimit.policies.tokens.actual-cost-header=X-Tokens-Used", "ratelimit.routes[0].path=/api/**",
					"ratelimit.routes[0].capacity=100")
			.run((context) -> assertThat(context).hasNotFailed());
	}

	@Test
	void failsWhenARouteNamesAPolicyThatSettles() {
		this.webContextRunner
			.withPropertyValues("ratelimit.policies.tokens.capacity=1000", "ratelimit.policies.tokens.estimate=10",
					"ratelimit.routes[0].path=/api/**", "ratelimit.routes[0].policy=tokens")
			.run((context) -> assertFailure(context, "ratelimit.routes[0].policy",
					"policy 'tokens' settles costs after the call"));
	}

	@Test
	void failsWhenAnAnnotationEstimateIsNoExpression() {
		this.aopContextRunner.withBean(UnparsableEstimateService.class)
			.run((context) -> assertFailure(context,
					"@RateLimited on " + UnparsableEstimateService.class.getName() + ".call(String) (estimate)",
					"'#body.' is not a valid SpEL expression"));
	}

	@Test
	void failsWhenAnAnnotationActualCostIsNegative() {
		this.aopContextRunner.withBean(NegativeActualCostService.class)
			.run((context) -> assertFailure(context,
					"@RateLimited on " + NegativeActualCostService.class.getName() + ".call() (actualCost)",
					"'-3' is not a whole number from 0"));
	}

	@Test
	void failsWhenAConcurrencyLimitSettles() {
		this.aopContextRunner.withBean(SettlingConcurrencyService.class)
			.run((context) -> assertFailure(context,
					"@RateLimited on " + SettlingConcurrencyService.class.getName() + ".call() (actual-cost-header)",
					"a concurrency limit counts calls in flight, which have no cost to settle"));
	}

	@Test
	void failsWhenAPolicyEstimateIsNoExpression() {
		this.contextRunner
			.withPropertyValues("ratelimit.policies.tokens.capacity=100", "ratelimit.policies.tokens.estimate=#a +")
			.run((context) -> assertFailure(context, "ratelimit.policies.tokens.estimate",
					"'#a +' is not a valid SpEL expression"));
	}

	@Test
	void failsWhenAPolicyEstimateIsNegative() {
		this.contextRunner
			.withPropertyValues("ratelimit.policies.tokens.capacity=100", "ratelimit.policies.tokens.estimate=-1")
			.run((context) -> assertFailure(context, "ratelimit.policies.tokens.estimate",
					"'-1' is not a whole number from 0"));
	}

	@Test
	void failsWhenAConcurrencyPolicySettles() {
		this.contextRunner
			.withPropertyValues("ratelimit.policies.exports.algorithm=concurrency",
					"ratelimit.policies.exports.capacity=2", "ratelimit.policies.exports.actual-cost=#result")
			.run((context) -> assertFailure(context, "ratelimit.policies.exports.actual-cost",
					"a concurrency limit counts calls in flight"));
	}

	@Test
	void failsWhenAPolicyActualCostHeaderIsNoHeaderName() {
		this.contextRunner
			.withPropertyValues("ratelimit.policies.tokens.capacity=100",
					"ratelimit.policies.tokens.actual-cost-header=X Cost")
			.run((context) -> assertFailure(context, "ratelimit.policies.tokens.actual-cost-header",
					"'X Cost' is not a header name"));
	}

	private static void assertFailure(ApplicationContextAssertProvider<?> context, String origin, String reason) {
		assertThat(context).hasFailed();
		RateLimitConfigurationException exception = null;
		for (Throwable candidate = context.getStartupFailure(); candidate != null; candidate = candidate.getCause()) {
			if (candidate instanceof RateLimitConfigurationException found) {
				exception = found;
			}
		}
		assertThat(exception).as("a RateLimitConfigurationException").isNotNull();
		assertThat(exception.getOrigin()).isEqualTo(origin);
		assertThat(exception.getReason()).contains(reason);
		assertThat(exception.getAction()).isNotBlank();
	}

	static class SettlingService {

		@RateLimited(name = "tokens", estimate = "#prompt.length()")
		public String call(String prompt) {
			return prompt;
		}

	}

	static class UnparsableEstimateService {

		@RateLimited(capacity = 100, estimate = "#body.")
		public void call(String body) {
		}

	}

	static class NegativeActualCostService {

		@RateLimited(capacity = 100, actualCost = "-3")
		public void call() {
		}

	}

	static class SettlingConcurrencyService {

		@RateLimited(algorithm = Algorithm.CONCURRENCY, capacity = 2, actualCostHeader = "X-Cost")
		public void call() {
		}

	}

}
