package io.github.ratelimit.test.servlet;

import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.KeySource;
import io.github.ratelimit.RateLimited;

/**
 * A servlet application with one limited endpoint: two greetings per client address in
 * each minute.
 */
@SpringBootApplication
public class GreetingApplication {

	@RestController
	static class GreetingController {

		@RateLimited(name = "greetings", algorithm = Algorithm.FIXED_WINDOW, capacity = 2, period = "1m",
				key = KeySource.IP)
		@GetMapping("/greetings")
		String greet() {
			return "hello";
		}

	}

}
