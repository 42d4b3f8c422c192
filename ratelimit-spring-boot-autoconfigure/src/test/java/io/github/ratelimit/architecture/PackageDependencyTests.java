package io.github.ratelimit.architecture;

import java.nio.file.Path;
import java.util.List;
import java.util.regex.Pattern;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Pins the package rules of the design: the core knows no Spring, the request pipeline
 * knows no web stack, the web front ends adapt to it without knowing each other or the
 * method interception, and nothing but the stores and their configuration asks which class
 * a store is.
 */
class PackageDependencyTests {

	private static final String INTERNAL = "io.github.ratelimit.internal.";

	@Test
	void coreModuleImportsNothingFromSpringOrAStoreTechnology() {
		assertThat(Sources.moduleImports("ratelimit-core")).isNotEmpty()
			.noneMatch((imported) -> imported.startsWith("org.springframework") || imported.startsWith("io.lettuce")
					|| imported.startsWith("io.micrometer") || imported.startsWith("reactor."));
	}

	@Test
	void redisModuleKnowsNoSpringBootAndNoWebStack() {
		assertThat(Sources.moduleImports("ratelimit-redis")).isNotEmpty()
			.noneMatch((imported) -> imported.startsWith("org.springframework.boot")
					|| imported.startsWith("org.springframework.web") || imported.startsWith("io.micrometer")
					|| imported.startsWith(INTERNAL + "pipeline"));
	}

	@Test
	void jdbcModuleKnowsNoSpringBootNoWebStackAndNoOtherStore() {
		assertThat(Sources.moduleImports("ratelimit-jdbc")).isNotEmpty()
			.noneMatch((imported) -> imported.startsWith("org.springframework.boot")
					|| imported.startsWith("org.springframework.web") || imported.startsWith("io.micrometer")
					|| imported.startsWith("org.springframework.data.redis") || imported.startsWith("io.lettuce")
					|| imported.startsWith(INTERNAL + "pipeline") || imported.startsWith(INTERNAL + "redis"));
	}

	@Test
	void pipelineImportsNoWebStackAndNoFrontEnd() {
		assertThat(Sources.imports(INTERNAL + "pipeline")).isNotEmpty()
			.noneMatch((imported) -> imported.startsWith("jakarta.servlet")
					|| imported.startsWith("org.springframework.web.servlet")
					|| imported.startsWith("org.springframework.web.reactive")
					|| imported.startsWith("org.springframework.web.server")
					|| imported.startsWith("org.springframework.http.server.reactive")
					|| imported.startsWith("reactor.") || imported.startsWith(INTERNAL + "web")
					|| imported.startsWith(INTERNAL + "aop"));
	}

	@Test
	void servletFrontEndImportsThePipelineButNeitherTheReactiveFrontEndNorMethodInterception() {
		assertThat(Sources.imports(INTERNAL + "web")).contains(INTERNAL + "pipeline.RequestRateLimiter")
			.noneMatch((imported) -> imported.startsWith(INTERNAL + "aop")
					|| imported.startsWith(INTERNAL + "webflux"));
	}

	@Test
	void reactiveFrontEndImportsNeitherTheServletFrontEndNorMethodInterception() {
		assertThat(Sources.imports(INTERNAL + "webflux")).isNotEmpty()
			.noneMatch((imported) -> imported.startsWith(INTERNAL + "aop")
					|| imported.startsWith(INTERNAL + "web.") || imported.startsWith("jakarta.servlet"));
	}

	@Test
	void methodInterceptionImportsNoFrontEnd() {
		assertThat(Sources.imports(INTERNAL + "aop")).isNotEmpty()
			.noneMatch((imported) -> imported.startsWith(INTERNAL + "web"));
	}

	@Test
	void onlyStoresAndTheirConfigurationAskWhichClassAStoreIs() {
		Pattern storeInstanceof = Pattern.compile(
				"instanceof\\s+(FailoverRateLimitStore|ObservedRateLimitStore|InMemoryRateLimitStore|RedisRateLimitStore)\\b");
		List<String> offenders = Sources.files()
			.stream()
			.filter((file) -> !isStoreOrConfiguration(file))
			.filter((file) -> storeInstanceof.matcher(Sources.read(file)).find())
			.map(Path::toString)
			.toList();
		assertThat(offenders).isEmpty();
	}

	private static boolean isStoreOrConfiguration(Path file) {
		String packageName = Sources.packageOf(file);
		return packageName.equals(INTERNAL + "memory") || packageName.equals(INTERNAL + "redis")
				|| packageName.equals("io.github.ratelimit.autoconfigure")
				|| file.getFileName().toString().endsWith("RateLimitStore.java");
	}

}
