package io.github.ratelimit.e2e;

import java.nio.charset.StandardCharsets;

import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.servlet.mvc.method.annotation.StreamingResponseBody;

import io.github.ratelimit.KeySource;
import io.github.ratelimit.RateLimitUsage;
import io.github.ratelimit.RateLimited;

/**
 * Handlers whose token limits reserve an estimate and settle the actual cost once the
 * response is final: from what they return, from a response header, or from what they
 * report to their {@link RateLimitUsage}.
 */
@RestController
class SettlingHandlers {

	@RateLimited(name = "settled-requests", capacity = 100, period = "1h", key = KeySource.GLOBAL)
	@RateLimited(name = "settled-tokens", capacity = 1000, period = "1h", key = KeySource.GLOBAL,
			estimate = "#maxTokens", actualCost = "#result.totalTokens")
	@PostMapping("/completions")
	Completion complete(@RequestParam long maxTokens, @RequestParam long used) {
		return new Completion(used);
	}

	@RateLimited(name = "header-tokens", capacity = 1000, period = "1h", key = KeySource.GLOBAL,
			estimate = "#estimate", actualCostHeader = "X-Tokens-Used")
	@GetMapping("/costs/header")
	ResponseEntity<String> header(@RequestParam long estimate, @RequestParam long used) {
		return ResponseEntity.ok().header("X-Tokens-Used", Long.toString(used)).body("used " + used);
	}

	@RateLimited(name = "reported-tokens", capacity = 1000, period = "1h", key = KeySource.GLOBAL,
			estimate = "#estimate")
	@GetMapping("/costs/reported")
	String reported(@RequestParam long estimate, @RequestParam long used, RateLimitUsage usage) {
		usage.report(used);
		return "used " + used;
	}

	@RateLimited(name = "current-tokens", capacity = 1000, period = "1h", key = KeySource.GLOBAL,
			estimate = "#estimate")
	@GetMapping("/costs/current")
	String current(@RequestParam long estimate, @RequestParam long used) {
		RateLimitUsage.current().report(used);
		return "used " + used;
	}

	@RateLimited(name = "stream-tokens", capacity = 1000, period = "1h", key = KeySource.GLOBAL,
			estimate = "#estimate")
	@GetMapping(path = "/costs/stream/lines", produces = MediaType.APPLICATION_NDJSON_VALUE)
	StreamingResponseBody lines(@RequestParam long estimate, @RequestParam int chunks, @RequestParam long used,
			RateLimitUsage usage) {
		// written on another thread once the handler has returned: the usage goes with it
		return (out) -> {
			for (int i = 1; i <= chunks; i++) {
				out.write(("{\"text\":\"part " + i + "\"}\n").getBytes(StandardCharsets.UTF_8));
				out.flush();
			}
			usage.report(used);
		};
	}

	/** What a model answers: how many tokens it used. */
	record Completion(long totalTokens) {
	}

}
