package io.github.ratelimit.autoconfigure;

import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.ImportAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.context.properties.bind.UnboundConfigurationPropertiesException;
import org.springframework.boot.context.properties.source.ConfigurationProperty;
import org.springframework.boot.context.properties.source.ConfigurationPropertyName;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.core.env.MapPropertySource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatException;

/**
 * A property under {@code ratelimit} that binds to nothing fails the startup, naming it
 * and the nearest known property, wherever it stands: at the top, in a group, in a policy,
 * a route, a plan of either, or a candidate.
 */
@ExtendWith(OutputCaptureExtension.class)
class UnknownRateLimitPropertyTests {

	private final ApplicationContextRunner contextRunner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(RateLimitAutoConfiguration.class));

	@ParameterizedTest
	@CsvSource({ "ratelimit.fail-mod=closed, ratelimit.fail-mode",
			"ratelimit.fallback-factr=0.2, ratelimit.fallback-factor",
			"ratelimit.redis.keyPrefx=a:, ratelimit.redis.key-prefix",
			"ratelimit.redis.timout=1s, ratelimit.redis.timeout",
			"ratelimit.client.retry.max-atempts=2, ratelimit.client.retry.max-attempts",
			"ratelimit.policies.exports.capcity=3, ratelimit.policies.exports.capacity",
			"ratelimit.policies.exports.candidate.algoritm=fixed-window, ratelimit.policies.exports.candidate.algorithm",
			"ratelimit.policies.exports.plans.pro.refil-tokens=3, ratelimit.policies.exports.plans.pro.refill-tokens",
			"ratelimit.routes[0].pathh=/a, ratelimit.routes[0].path",
			"ratelimit.routes[0].plans.pro.capcity=3, ratelimit.routes[0].plans.pro.capacity",
			"ratelimit.polices.exports.capacity=3, ratelimit.policies.exports.capacity",
			"'ratelimit.policies[GET /things/{id}].perod=1m', 'ratelimit.policies[GET /things/{id}].period'" })
	void failsNamingTheUnknownPropertyAndTheNearestKnownOne(String property, String nearest) {
		// as Boot names it: lower case outside brackets, dashes kept
		String name = ConfigurationPropertyName.adapt(property.substring(0, property.indexOf('=')), '.').toString();
		this.contextRunner.withPropertyValues("ratelimit.policies.exports.capacity=5", property).run((context) -> {
			assertThat(context).hasFailed();
			Throwable failure = context.getStartupFailure();
			assertThat(failure).rootCause()
				.isInstanceOf(UnboundConfigurationPropertiesException.class)
				.hasMessageContaining(name);
			FailureAnalysis analysis = RateLimitStartupValidationTests.analyzeAsBootDoes(failure);
			assertThat(analysis.getDescription())
				.contains(name + " is not a known property; did you mean " + nearest + "?");
			assertThat(analysis.getAction()).contains("docs/configuration.md");
		});
	}

	@Test
	void listsTheKnownPropertiesWhenNoneIsNear() {
		this.contextRunner.withPropertyValues("ratelimit.tenant.colour=blue")
			.run((context) -> assertThat(RateLimitStartupValidationTests.analyzeAsBootDoes(context.getStartupFailure()).getDescription())
				.contains("ratelimit.tenant.colour is not a known property; the properties of ratelimit.tenant are "
						+ "header, pattern"));
	}

	@Test
	void namesEveryUnknownProperty() {
		this.contextRunner.withPropertyValues("ratelimit.policies.a.capcity=3", "ratelimit.routes[0].methds=GET",
				"ratelimit.routes[0].path=/a", "ratelimit.routes[0].capacity=1")
			.run((context) -> assertThat(RateLimitStartupValidationTests.analyzeAsBootDoes(context.getStartupFailure()).getDescription())
				.contains("ratelimit.policies.a.capcity is not a known property; did you mean "
						+ "ratelimit.policies.a.capacity?")
				.contains("ratelimit.routes[0].methds is not a known property; did you mean "
						+ "ratelimit.routes[0].methods?"));
	}

	@Test
	void startsWithEveryPropertySpelledInAnyRelaxedForm() {
		this.contextRunner
			.withPropertyValues("ratelimit.policies.exports.capacity=3", "ratelimit.policies.exports.refillTokens=1",
					"ratelimit.policies.exports.plans.pro.refill_tokens=2", "ratelimit.redis.key-layout=hash-per-slot",
					"ratelimit.client.retry.maxAttempts=2", "ratelimit.policies.exports.candidate.capacity=4")
			.run((context) -> assertThat(context).hasNotFailed());
	}

	@Test
	void startsWhenASourceOfHigherPrecedenceReplacesTheApplicationsRoutes() {
		// Boot binds a list from one source: the application's route entries stay unbound, and are no typos
		new WebApplicationContextRunner().withConfiguration(AutoConfigurations.of(RateLimitAutoConfiguration.class))
			.withInitializer((context) -> context.getEnvironment()
			.getPropertySources()
			.addLast(new MapPropertySource("application", Map.of("ratelimit.routes[0].path", "/a",
					"ratelimit.routes[0].methods[0]", "GET", "ratelimit.routes[0].capacity", "1"))))
			.withPropertyValues("ratelimit.routes[0].path=/b", "ratelimit.routes[0].capacity=2")
			.run((context) -> {
				assertThat(context).hasNotFailed();
				assertThat(context.getBean(RateLimitProperties.class).getRoutes()).singleElement()
					.satisfies((route) -> assertThat(route.getPath()).isEqualTo("/b"));
			});
	}

	@Test
	void namesAnUnknownPropertyOfASourceOfLowerPrecedence() {
		this.contextRunner.withInitializer((context) -> context.getEnvironment()
			.getPropertySources()
			.addLast(new MapPropertySource("application", Map.of("ratelimit.routes[0].pathh", "/a"))))
			.withPropertyValues("ratelimit.routes[0].path=/b", "ratelimit.routes[0].capacity=2")
			.run((context) -> assertThat(
					RateLimitStartupValidationTests.analyzeAsBootDoes(context.getStartupFailure()).getDescription())
				.contains("ratelimit.routes[0].pathh is not a known property; did you mean ratelimit.routes[0].path?"));
	}

	@Test
	void leavesUnboundPropertiesOfOtherPrefixesToBoot() {
		UnboundConfigurationPropertiesException unbound = new UnboundConfigurationPropertiesException(
				new TreeSet<>(Set.of(new ConfigurationProperty(ConfigurationPropertyName.of("other.x"), "1", null))));
		assertThat(new UnknownRateLimitPropertyFailureAnalyzer().analyze(unbound)).isNull();
	}

	@Test
	void failsTheStartupOfAnApplicationWithTheSuggestion(CapturedOutput output) {
		assertThatException()
			.isThrownBy(() -> new SpringApplicationBuilder(PlainApplication.class).web(WebApplicationType.NONE)
				.run("--ratelimit.policies.exports.capcity=3", "--spring.main.banner-mode=off"));
		assertThat(output).contains("ratelimit.policies.exports.capcity is not a known property; did you mean "
				+ "ratelimit.policies.exports.capacity? (from \"ratelimit.policies.exports.capcity\" from property "
				+ "source \"commandLineArgs\")");
	}

	@SpringBootConfiguration(proxyBeanMethods = false)
	@ImportAutoConfiguration(RateLimitAutoConfiguration.class)
	static class PlainApplication {

	}

}
