package io.github.ratelimit.benchmarks.minimal;

import io.github.resilience4j.ratelimiter.annotation.RateLimiter;

import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication.Type;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

/**
 * The servlet handler Resilience4j limits, alone in its bean: its aspect proxies the whole
 * bean, and the unlimited twin in {@link ServletHandlers} stays out of the proxy.
 */
@RestController
@ConditionalOnWebApplication(type = Type.SERVLET)
class ServletResilience4jHandler {

	@RateLimiter(name = "minimal")
	@GetMapping("${minimal.resilience4j.limited-path}")
	String limited() {
		return "ok";
	}

}
