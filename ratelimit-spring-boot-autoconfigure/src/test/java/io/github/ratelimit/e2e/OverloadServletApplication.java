package io.github.ratelimit.e2e;

import java.util.concurrent.TimeUnit;

import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.http.ResponseEntity;
import org.springframework.security.config.annotation.web.builders.HttpSecurity;
import org.springframework.security.web.SecurityFilterChain;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.context.request.async.DeferredResult;

import io.github.ratelimit.OverloadPriority;
import io.github.ratelimit.RequestPriority;
import io.github.ratelimit.RequestPriorityResolver;

/**
 * A servlet service under overload protection whose handlers stay in flight while the
 * test holds them, with a priority from every source.
 */
@SpringBootConfiguration
@EnableAutoConfiguration(excludeName = "org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration")
@Import({ OverloadServletApplication.WorkController.class, OverloadServletApplication.SearchController.class })
public class OverloadServletApplication {

	@Bean
	SecurityFilterChain security(HttpSecurity http) throws Exception {
		return http.csrf((csrf) -> csrf.disable())
			.authorizeHttpRequests((requests) -> requests.anyRequest().permitAll())
			.build();
	}

	/** A customer the application ranks critical, whatever the handler says. */
	@Bean
	RequestPriorityResolver vipPriority() {
		return (request) -> "yes".equals(request.header("X-Vip")) ? RequestPriority.CRITICAL : null;
	}

	@RestController
	static class WorkController {

		@GetMapping("/held")
		String held() throws Exception {
			HeldCalls.released().get(30, TimeUnit.SECONDS);
			return "held";
		}

		@GetMapping("/quick")
		String quick() {
			return "quick";
		}

		@GetMapping("/reports/{id}")
		String report(@PathVariable String id) {
			return "report " + id;
		}

		@GetMapping("/internal/ping")
		String ping() {
			return "pong";
		}

		@GetMapping("/status/{code}")
		ResponseEntity<String> status(@PathVariable int code) {
			return ResponseEntity.status(code).body("status " + code);
		}

		@GetMapping("/boom")
		String boom() {
			throw new IllegalStateException("boom");
		}

		@GetMapping("/async-held")
		DeferredResult<String> asyncHeld() {
			DeferredResult<String> result = new DeferredResult<>(30_000L);
			HeldCalls.released().thenRun(() -> result.setResult("async"));
			return result;
		}

		@GetMapping("/async-timeout")
		DeferredResult<String> asyncTimeout() {
			// never answered: times out
			return new DeferredResult<>(100L);
		}

	}

	@RestController
	@OverloadPriority(RequestPriority.SHEDDABLE)
	static class SearchController {

		@GetMapping("/search")
		String search() {
			return "search";
		}

		@OverloadPriority(RequestPriority.CRITICAL)
		@GetMapping("/search/urgent")
		String urgent() {
			return "urgent";
		}

	}

}
