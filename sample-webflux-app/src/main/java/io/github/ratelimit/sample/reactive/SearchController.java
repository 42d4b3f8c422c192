package io.github.ratelimit.sample.reactive;

import reactor.core.publisher.Flux;

import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

import io.github.ratelimit.OverloadPriority;
import io.github.ratelimit.RequestPriority;

/**
 * Search has no annotation: {@code ratelimit.routes} limits it per client IP, in a web
 * filter that runs before Spring Security. Mapped twice, as in the servlet sample, so that
 * a benchmark can limit one path and compare it with its unlimited twin. When the service
 * is overloaded, searches are the first requests turned away.
 */
@RestController
@OverloadPriority(RequestPriority.SHEDDABLE)
class SearchController {

	@GetMapping({ "/api/search", "/api/search/products" })
	Flux<String> search(@RequestParam(defaultValue = "") String q) {
		return Flux.just("result for " + q);
	}

}
