package io.github.ratelimit.sample;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;

/**
 * A small order service showing every way ratelimit-spring-boot limits requests:
 * annotated controllers, shared policies with weighted costs, per-user and per-tenant
 * keys, a rate limited service bean and a route limited only by configuration.
 */
@SpringBootApplication
public class SampleApplication {

	/**
	 * Starts the service.
	 * @param args command line arguments
	 */
	public static void main(String[] args) {
		SpringApplication.run(SampleApplication.class, args);
	}

}
