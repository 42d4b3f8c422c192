package io.github.ratelimit.benchmarks.minimal;

import io.github.resilience4j.ratelimiter.annotation.RateLimiter;
import reactor.core.publisher.Mono;

import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication.Type;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

/**
 * The WebFlux handler Resilience4j limits, alone in its bean as on the servlet stack; its
 * aspect applies the limiter to the {@code Mono} through Resilience4j's Reactor operator.
 */
@RestController
@ConditionalOnWebApplication(type = Type.REACTIVE)
class ReactiveResilience4jHandler {

	@RateLimiter(name = "minimal")
	@GetMapping("${minimal.resilience4j.limited-path}")
	Mono<String> limited() {
		return Mono.just("ok");
	}

}
