package io.github.ratelimit.e2e;

import reactor.core.publisher.Mono;

import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

import io.github.ratelimit.KeySource;
import io.github.ratelimit.RateLimitUsage;
import io.github.ratelimit.RateLimited;

/**
 * The reactive twins of {@link SettlingHandlers}: token limits reserving an estimate (read
 * from query parameters, before the handler's arguments are resolved) and settling the
 * actual cost as the response commits.
 */
@RestController
class ReactiveSettlingHandlers {

	@RateLimited(name = "completion-requests", capacity = 100, period = "1h", key = KeySource.GLOBAL)
	@RateLimited(name = "settled-tokens", capacity = 1000, period = "1h", key = KeySource.GLOBAL,
			estimate = "#maxTokens", actualCost = "#result.totalTokens")
	@PostMapping("/completions")
	Mono<SettlingHandlers.Completion> complete(@RequestParam long maxTokens, @RequestParam long used) {
		return Mono.fromSupplier(() -> new SettlingHandlers.Completion(used));
	}

	@RateLimited(name = "header-tokens", capacity = 1000, period = "1h", key = KeySource.GLOBAL,
			estimate = "#estimate", actualCostHeader = "X-Tokens-Used")
	@GetMapping("/costs/header")
	Mono<ResponseEntity<String>> header(@RequestParam long estimate, @RequestParam long used) {
		return Mono.just(ResponseEntity.ok().header("X-Tokens-Used", Long.toString(used)).body("used " + used));
	}

	@RateLimited(name = "reported-tokens", capacity = 1000, period = "1h", key = KeySource.GLOBAL,
			estimate = "#estimate")
	@GetMapping("/costs/reported")
	Mono<String> reported(@RequestParam long estimate, @RequestParam long used, RateLimitUsage usage) {
		usage.report(used);
		return Mono.just("used " + used);
	}

	@RateLimited(name = "context-tokens", capacity = 1000, period = "1h", key = KeySource.GLOBAL,
			estimate = "#estimate")
	@GetMapping("/costs/context")
	Mono<String> context(@RequestParam long estimate, @RequestParam long used) {
		return Mono.deferContextual((context) -> {
			context.get(RateLimitUsage.class).report(used);
			return Mono.just("used " + used);
		});
	}

}
