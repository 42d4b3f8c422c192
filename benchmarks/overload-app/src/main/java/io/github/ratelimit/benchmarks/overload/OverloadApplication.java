package io.github.ratelimit.benchmarks.overload;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.context.properties.EnableConfigurationProperties;

/**
 * The service the overload benchmark drives ({@code benchmarks/overload-bench.sh}): one
 * endpoint, {@code GET /work}, in front of a {@link SaturatedDependency}, with the
 * protection {@code bench.protection} names.
 */
@SpringBootApplication
@EnableConfigurationProperties(BenchSettings.class)
public class OverloadApplication {

	/**
	 * Starts the service.
	 * @param args Spring Boot's command line ({@code --bench.protection=fixed} ...)
	 */
	public static void main(String[] args) {
		SpringApplication.run(OverloadApplication.class, args);
	}

}
