package io.github.ratelimit.test.servlet;

import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.RestController;

import io.github.ratelimit.RateLimited;

/**
 * The controller of the README's quick start: five requests per client per minute, in one
 * bucket for every id.
 */
@RestController
class ThingsController {

	@RateLimited(capacity = 5, period = "1m")
	@GetMapping("/things/{id}")
	String thing(@PathVariable String id) {
		return "thing " + id;
	}

}
