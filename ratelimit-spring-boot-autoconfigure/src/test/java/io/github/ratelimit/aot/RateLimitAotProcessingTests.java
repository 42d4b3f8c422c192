package io.github.ratelimit.aot;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.aot.generate.ClassNameGenerator;
import org.springframework.aot.generate.DefaultGenerationContext;
import org.springframework.aot.generate.InMemoryGeneratedFiles;
import org.springframework.aot.hint.MemberCategory;
import org.springframework.aot.hint.RuntimeHints;
import org.springframework.aot.hint.predicate.RuntimeHintsPredicates;
import org.springframework.boot.autoconfigure.ImportAutoConfiguration;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.aot.ApplicationContextAotGenerator;
import org.springframework.javapoet.ClassName;

import io.github.ratelimit.RateLimited;
import io.github.ratelimit.autoconfigure.RateLimitAutoConfiguration;
import io.github.ratelimit.autoconfigure.RateLimitPolicyProperties;
import io.github.ratelimit.autoconfigure.RateLimitProperties;
import io.github.ratelimit.autoconfigure.RateLimitRouteProperties;
import io.github.ratelimit.internal.redis.RedisScripts;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Runs Spring's AOT engine over an application with rate limited beans, as
 * {@code spring-boot:process-aot} does, and checks the hints a native image would be
 * built with: the starter's own (from {@code aot.factories}), those of its rate limited
 * beans (the annotation is {@code @Reflective}), and Spring Boot's for binding
 * {@code ratelimit.*}.
 */
class RateLimitAotProcessingTests {

	private RuntimeHints hints;

	@BeforeEach
	void processAheadOfTime() {
		try (AnnotationConfigApplicationContext context = new AnnotationConfigApplicationContext()) {
			context.register(Application.class);
			DefaultGenerationContext generation = new DefaultGenerationContext(
					new ClassNameGenerator(ClassName.get("com.example", "Application")), new InMemoryGeneratedFiles());
			new ApplicationContextAotGenerator().processAheadOfTime(context, generation);
			this.hints = generation.getRuntimeHints();
		}
	}

	@Test
	void includesTheStartersOwnHints() {
		assertThat(RuntimeHintsPredicates.resource().forResource(RedisScripts.LOCATION + "acquire.lua"))
			.accepts(this.hints);
	}

	@Test
	void letsTheInterceptorInvokeLimitedMethodsAndKeyExpressionsReadTheirArguments() {
		assertThat(RuntimeHintsPredicates.reflection().onMethodInvocation(SignIn.class, "signIn")).accepts(this.hints);
		assertThat(RuntimeHintsPredicates.reflection().onType(SignIn.class)).accepts(this.hints);
		assertThat(RuntimeHintsPredicates.reflection().onMethodInvocation(Credentials.class, "username"))
			.accepts(this.hints);
	}

	@Test
	void coversEveryPublicMethodOfALimitedType() {
		assertThat(RuntimeHintsPredicates.reflection()
			.onType(Notifier.class)
			.withMemberCategory(MemberCategory.INVOKE_PUBLIC_METHODS)).accepts(this.hints);
		assertThat(RuntimeHintsPredicates.reflection().onMethodInvocation(Recipient.class, "address"))
			.accepts(this.hints);
		assertThat(RuntimeHintsPredicates.reflection().onMethodInvocation(Address.class, "email")).accepts(this.hints);
	}

	@Test
	void coversRepeatedLimitsAndLeavesAloneArgumentsNoExpressionReads() {
		assertThat(RuntimeHintsPredicates.reflection().onMethodInvocation(Reports.class, "report")).accepts(this.hints);
		assertThat(RuntimeHintsPredicates.reflection().onType(ReportRequest.class)).rejects(this.hints);
	}

	@Test
	void springBootBindsTheConfigurationProperties() {
		assertThat(RuntimeHintsPredicates.reflection().onType(RateLimitProperties.class)).accepts(this.hints);
		assertThat(RuntimeHintsPredicates.reflection().onMethodInvocation(RateLimitProperties.class, "setFallbackFactor"))
			.accepts(this.hints);
		assertThat(RuntimeHintsPredicates.reflection()
			.onMethodInvocation(RateLimitProperties.Redis.class, "setKeyPrefix")).accepts(this.hints);
		assertThat(RuntimeHintsPredicates.reflection().onMethodInvocation(RateLimitPolicyProperties.class, "setCapacity"))
			.accepts(this.hints);
		assertThat(RuntimeHintsPredicates.reflection()
			.onMethodInvocation(RateLimitRouteProperties.class, "setPath")).accepts(this.hints);
	}

	@Configuration(proxyBeanMethods = false)
	@ImportAutoConfiguration(RateLimitAutoConfiguration.class)
	static class Application {

		@Bean
		SignIn signIn() {
			return new SignIn();
		}

		@Bean
		Notifier notifier() {
			return new Notifier();
		}

		@Bean
		Reports reports() {
			return new Reports();
		}

	}

	public static class SignIn {

		@RateLimited(name = "sign-in", capacity = 5, period = "1m", keyExpression = "#credentials.username")
		public void signIn(Credentials credentials) {
		}

	}

	public record Credentials(String username, String password) {
	}

	@RateLimited(name = "notifications", capacity = 5, period = "1s", keyExpression = "#recipient.address.email")
	public static class Notifier {

		public void notify(Recipient recipient, String text) {
		}

	}

	public record Recipient(Address address) {
	}

	public record Address(String email) {
	}

	public static class Reports {

		@RateLimited(name = "reports-per-minute", capacity = 5, period = "1m")
		@RateLimited(name = "reports-per-hour", capacity = 50, period = "1h")
		public void report(ReportRequest request) {
		}

	}

	public record ReportRequest(String title) {
	}

}
