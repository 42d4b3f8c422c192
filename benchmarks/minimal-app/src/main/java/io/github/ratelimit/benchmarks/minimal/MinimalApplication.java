package io.github.ratelimit.benchmarks.minimal;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;

/**
 * The smallest handlers a service can have, each answering {@code ok}, limited by this
 * library, by Resilience4j or by nothing, for {@code benchmarks/minimal-bench.sh}. Which
 * path each limiter limits is configuration, so that one launch limits one path of a pair
 * and another launch the other, and the paths' own difference cancels.
 * <p>
 * Servlet (Tomcat) by default; {@code --spring.main.web-application-type=reactive} starts
 * the same handlers on WebFlux (Netty), returning {@code Mono}.
 */
@SpringBootApplication
public class MinimalApplication {

	/**
	 * Starts the application.
	 * @param args command line arguments
	 */
	public static void main(String[] args) {
		SpringApplication.run(MinimalApplication.class, args);
	}

}
