package io.github.ratelimit.test.reactive;

import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.RestController;

import reactor.core.publisher.Mono;

import io.github.ratelimit.RateLimited;

/**
 * The README's quick start controller, reactive: five requests per client per minute, in
 * one bucket for every id.
 */
@RestController
class ThingsController {

	@RateLimited(capacity = 5, period = "1m")
	@GetMapping("/things/{id}")
	Mono<String> thing(@PathVariable String id) {
		return Mono.just("thing " + id);
	}

}
