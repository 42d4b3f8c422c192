package io.github.ratelimit.benchmarks.minimal;

import reactor.core.publisher.Mono;

import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication.Type;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

/**
 * The WebFlux handlers no annotation limits, as {@link ServletHandlers} on the servlet
 * stack: {@code ratelimit.routes} limits one path of {@link #ours()} in the web filter.
 */
@RestController
@ConditionalOnWebApplication(type = Type.REACTIVE)
class ReactiveHandlers {

	@GetMapping({ "/ours/a", "/ours/b" })
	Mono<String> ours() {
		return Mono.just("ok");
	}

	@GetMapping("${minimal.resilience4j.unlimited-path}")
	Mono<String> unlimited() {
		return Mono.just("ok");
	}

}
