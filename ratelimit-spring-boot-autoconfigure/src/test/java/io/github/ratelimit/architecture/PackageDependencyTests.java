package io.github.ratelimit.architecture;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Pins the package rules of the design: the request pipeline knows no web stack, the web
 * front ends adapt to it without knowing each other or the method interception, and
 * nothing but the stores and their configuration asks which class a store is.
 */
class PackageDependencyTests {

	private static final Path SOURCES = Path.of("src/main/java/io/github/ratelimit");

	private static final Pattern IMPORT = Pattern.compile("^import (?:static )?([\\w.]+)(?:\\.\\*)?;", Pattern.MULTILINE);

	@Test
	void pipelineImportsNoWebStackAndNoFrontEnd() {
		assertThat(imports("pipeline")).noneMatch((imported) -> imported.startsWith("jakarta.servlet")
				|| imported.startsWith("org.springframework.web.servlet")
				|| imported.startsWith("org.springframework.web.reactive")
				|| imported.startsWith("org.springframework.web.server")
				|| imported.startsWith("org.springframework.http.server.reactive")
				|| imported.startsWith("reactor.") || imported.startsWith("io.github.ratelimit.web")
				|| imported.startsWith("io.github.ratelimit.webflux") || imported.startsWith("io.github.ratelimit.aop"));
	}

	@Test
	void servletFrontEndImportsThePipelineButNeitherTheReactiveFrontEndNorMethodInterception() {
		assertThat(imports("web")).contains("io.github.ratelimit.pipeline.RequestRateLimiter")
			.noneMatch((imported) -> imported.startsWith("io.github.ratelimit.aop")
					|| imported.startsWith("io.github.ratelimit.webflux"));
	}

	@Test
	void reactiveFrontEndImportsNeitherTheServletFrontEndNorMethodInterception() {
		assertThat(imports("webflux")).noneMatch((imported) -> imported.startsWith("io.github.ratelimit.aop")
				|| imported.startsWith("io.github.ratelimit.web.") || imported.startsWith("jakarta.servlet"));
	}

	@Test
	void methodInterceptionImportsNoFrontEnd() {
		assertThat(imports("aop")).noneMatch((imported) -> imported.startsWith("io.github.ratelimit.web"));
	}

	@Test
	void coreImportsNothingFromSpring() {
		assertThat(imports("core")).noneMatch((imported) -> imported.startsWith("org.springframework"));
	}

	@Test
	void onlyStoresAndTheirConfigurationAskWhichClassAStoreIs() {
		Pattern storeInstanceof = Pattern.compile(
				"instanceof\\s+(FailoverRateLimitStore|ObservedRateLimitStore|InMemoryRateLimitStore|RedisRateLimitStore)\\b");
		try (Stream<Path> files = Files.walk(SOURCES)) {
			List<String> offenders = files.filter((file) -> file.toString().endsWith(".java"))
				.filter((file) -> !isStoreOrConfiguration(file))
				.filter((file) -> storeInstanceof.matcher(read(file)).find())
				.map(Path::toString)
				.toList();
			assertThat(offenders).isEmpty();
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

	private static boolean isStoreOrConfiguration(Path file) {
		String path = SOURCES.relativize(file).toString().replace('\\', '/');
		return path.startsWith("memory/") || path.startsWith("redis/") || path.startsWith("autoconfigure/")
				|| path.endsWith("RateLimitStore.java");
	}

	private static List<String> imports(String packageName) {
		Path directory = SOURCES.resolve(packageName);
		if (!Files.isDirectory(directory)) {
			return List.of();
		}
		try (Stream<Path> files = Files.list(directory)) {
			return files.filter((file) -> file.toString().endsWith(".java")).flatMap((file) -> {
				Matcher matcher = IMPORT.matcher(read(file));
				return matcher.results().map((result) -> result.group(1));
			}).toList();
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

	private static String read(Path file) {
		try {
			return Files.readString(file);
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

}
