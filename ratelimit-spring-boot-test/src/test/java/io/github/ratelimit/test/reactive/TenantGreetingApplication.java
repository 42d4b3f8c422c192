package io.github.ratelimit.test.reactive;

import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

import reactor.core.publisher.Mono;

import io.github.ratelimit.KeySource;
import io.github.ratelimit.RateLimited;

/**
 * A reactive application with one limited endpoint: a bucket of two greetings per tenant,
 * refilled with one every 30 seconds.
 */
@SpringBootApplication
public class TenantGreetingApplication {

	@RestController
	static class TenantGreetingController {

		@RateLimited(name = "tenant-greetings", capacity = 2, period = "1m", key = KeySource.TENANT)
		@GetMapping("/greetings")
		Mono<String> greet() {
			return Mono.just("hello");
		}

	}

}
