package io.github.ratelimit.compat;

import java.nio.file.Path;
import java.security.CodeSource;

import io.lettuce.core.RedisClient;
import io.netty.handler.codec.http.HttpServerCodec;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.netty.http.server.HttpServer;

import org.springframework.boot.SpringBootVersion;
import org.springframework.core.SpringVersion;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The suites run on the Spring Boot version the build asked for, and the versions it
 * manages are printed with the test output, so a run of the matrix says what it tested.
 */
class ResolvedVersionsTests {

	@Test
	void suitesRunOnTheSpringBootVersionTheBuildAskedFor() {
		String expected = System.getProperty("compat.boot.version");
		assertThat(expected).as("system property compat.boot.version, set by the pom").isNotBlank();
		assertThat(SpringBootVersion.getVersion()).isEqualTo(expected);
		System.out.printf("compat: Java %s, Spring Boot %s, Spring Framework %s, %s, %s, %s, %s%n",
				Runtime.version(), SpringBootVersion.getVersion(), SpringVersion.getVersion(),
				jar(HttpServer.class), jar(Mono.class), jar(HttpServerCodec.class), jar(RedisClient.class));
	}

	/** The name of the jar a class was loaded from, which carries its version. */
	private static String jar(Class<?> type) {
		CodeSource source = type.getProtectionDomain().getCodeSource();
		String location = source.getLocation().getPath();
		return Path.of(location).getFileName().toString().replaceFirst("\\.jar$", "");
	}

}
