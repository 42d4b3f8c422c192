package io.github.ratelimit.benchmarks.minimal;

import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication.Type;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

/**
 * The servlet handlers no annotation limits. {@code ratelimit.routes} limits one of the
 * two paths of {@link #ours()} in the filter, so the limited and the unlimited request run
 * the same method; {@link #unlimited()} is the twin of Resilience4j's limited handler.
 */
@RestController
@ConditionalOnWebApplication(type = Type.SERVLET)
class ServletHandlers {

	@GetMapping({ "/ours/a", "/ours/b" })
	String ours() {
		return "ok";
	}

	@GetMapping("${minimal.resilience4j.unlimited-path}")
	String unlimited() {
		return "ok";
	}

}
