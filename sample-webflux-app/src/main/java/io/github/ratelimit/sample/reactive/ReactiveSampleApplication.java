package io.github.ratelimit.sample.reactive;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;

/**
 * A reactive service limited the same ways as the servlet sample: an annotated handler,
 * a policy from {@code application.yml}, a route limit in front of Spring Security and
 * a limited reactive service bean.
 */
@SpringBootApplication
public class ReactiveSampleApplication {

	public static void main(String[] args) {
		SpringApplication.run(ReactiveSampleApplication.class, args);
	}

}
