package io.github.ratelimit.sample.reactive;

import java.security.Principal;

import reactor.core.publisher.Mono;

import org.springframework.http.HttpStatus;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.ResponseStatus;
import org.springframework.web.bind.annotation.RestController;

import io.github.ratelimit.KeySource;
import io.github.ratelimit.OverloadPriority;
import io.github.ratelimit.RateLimited;
import io.github.ratelimit.RequestPriority;

/**
 * Orders: reading is limited per user and route template, placing orders by the
 * {@code orders-write} policy of {@code application.yml}.
 */
@RestController
class OrderController {

	/** Ten reads per minute per user; every order id shares the bucket {@code GET /api/orders/{id}}. */
	@RateLimited(capacity = 10, period = "1m", key = KeySource.PRINCIPAL)
	@GetMapping("/api/orders/{id}")
	Mono<String> order(@PathVariable String id, Principal principal) {
		return Mono.just("{\"id\":\"" + id + "\",\"owner\":\"" + principal.getName() + "\"}");
	}

	/**
	 * Limited entirely by {@code ratelimit.policies.orders-write}, with plans; when the
	 * service is overloaded, it keeps the reserved share of the limit on calls in flight.
	 */
	@RateLimited("orders-write")
	@OverloadPriority(RequestPriority.CRITICAL)
	@PostMapping("/api/orders")
	@ResponseStatus(HttpStatus.CREATED)
	Mono<String> place(Principal principal) {
		return Mono.just("{\"owner\":\"" + principal.getName() + "\"}");
	}

}
