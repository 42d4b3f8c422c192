package io.github.ratelimit.aot;

import java.io.IOException;
import java.util.List;

import jakarta.servlet.http.HttpServletRequest;
import org.junit.jupiter.api.Test;

import org.springframework.aot.hint.MemberCategory;
import org.springframework.aot.hint.RuntimeHints;
import org.springframework.aot.hint.RuntimeHintsRegistrar;
import org.springframework.aot.hint.predicate.RuntimeHintsPredicates;
import org.springframework.core.io.Resource;
import org.springframework.core.io.support.PathMatchingResourcePatternResolver;
import org.springframework.core.io.support.SpringFactoriesLoader;
import org.springframework.http.server.reactive.ServerHttpRequest;

import io.github.ratelimit.RateLimited;
import io.github.ratelimit.internal.actuate.RateLimitsEndpoint;
import io.github.ratelimit.internal.actuate.RateLimitsEndpointWebExtension;
import io.github.ratelimit.internal.redis.RedisScripts;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The hints the starter registers through {@code META-INF/spring/aot.factories}, for what
 * it reads reflectively or as a resource.
 */
class RateLimitRuntimeHintsTests {

	private final RuntimeHints hints = registered();

	@Test
	void coversEveryPackagedLuaScript() throws IOException {
		Resource[] scripts = new PathMatchingResourcePatternResolver()
			.getResources("classpath*:" + RedisScripts.LOCATION + "*.lua");
		assertThat(scripts).hasSizeGreaterThan(5);
		for (Resource script : scripts) {
			assertThat(RuntimeHintsPredicates.resource().forResource(RedisScripts.LOCATION + script.getFilename()))
				.as(script.getFilename())
				.accepts(this.hints);
		}
		assertThat(RuntimeHintsPredicates.resource().forResource(RedisScripts.LOCATION + "other.txt"))
			.rejects(this.hints);
	}

	@Test
	void letsTheAnnotationsAttributesBeRead() {
		assertThat(RuntimeHintsPredicates.reflection().onMethodInvocation(RateLimited.class, "keyExpression"))
			.accepts(this.hints);
		assertThat(RuntimeHintsPredicates.reflection().onMethodInvocation(RateLimited.List.class, "value"))
			.accepts(this.hints);
	}

	@Test
	void letsKeyExpressionsCallTheRequest() {
		assertThat(RuntimeHintsPredicates.reflection()
			.onType(HttpServletRequest.class)
			.withMemberCategory(MemberCategory.INVOKE_PUBLIC_METHODS)).accepts(this.hints);
		assertThat(RuntimeHintsPredicates.reflection()
			.onType(ServerHttpRequest.class)
			.withMemberCategory(MemberCategory.INVOKE_PUBLIC_METHODS)).accepts(this.hints);
		assertThat(RuntimeHintsPredicates.reflection().onMethodInvocation(HttpServletRequest.class, "getHeader"))
			.accepts(this.hints);
	}

	@Test
	void letsJacksonWriteTheEndpointsBodies() {
		for (Class<?> body : List.of(RateLimitsEndpoint.LimitsDescriptor.class, RateLimitsEndpoint.StoreDescriptor.class,
				RateLimitsEndpoint.LimitDescriptor.class, RateLimitsEndpoint.PlanDescriptor.class,
				RateLimitsEndpoint.CandidateDescriptor.class, RateLimitsEndpoint.GuardDescriptor.class,
				RateLimitsEndpoint.IdentityDescriptor.class, RateLimitsEndpoint.BucketDescriptor.class,
				RateLimitsEndpoint.ResetDescriptor.class, RateLimitsEndpointWebExtension.Rejection.class)) {
			for (var component : body.getRecordComponents()) {
				assertThat(RuntimeHintsPredicates.reflection().onMethodInvocation(component.getAccessor()))
					.as(body.getSimpleName() + "." + component.getName())
					.accepts(this.hints);
			}
		}
	}

	private static RuntimeHints registered() {
		List<RuntimeHintsRegistrar> registrars = SpringFactoriesLoader.forResourceLocation("META-INF/spring/aot.factories")
			.load(RuntimeHintsRegistrar.class);
		assertThat(registrars).extracting((registrar) -> registrar.getClass().getName())
			.contains("io.github.ratelimit.autoconfigure.RateLimitRuntimeHints");
		RuntimeHints hints = new RuntimeHints();
		registrars.stream()
			.filter((registrar) -> registrar.getClass().getName().startsWith("io.github.ratelimit"))
			.forEach((registrar) -> registrar.registerHints(hints, RateLimitRuntimeHintsTests.class.getClassLoader()));
		return hints;
	}

}
