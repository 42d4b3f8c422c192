package io.github.ratelimit.e2e;

import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.security.config.web.server.ServerHttpSecurity;
import org.springframework.security.web.server.SecurityWebFilterChain;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.server.ResponseStatusException;

import io.github.ratelimit.OverloadPriority;
import io.github.ratelimit.RequestPriority;
import io.github.ratelimit.RequestPriorityResolver;

/**
 * A reactive service under overload protection whose handlers stay in flight while the
 * test holds them, without blocking a thread, with a priority from every source.
 */
@SpringBootConfiguration
@EnableAutoConfiguration(excludeName = "org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration")
@Import({ OverloadReactiveApplication.WorkController.class, OverloadReactiveApplication.SearchController.class })
public class OverloadReactiveApplication {

	@Bean
	SecurityWebFilterChain security(ServerHttpSecurity http) {
		return http.csrf(ServerHttpSecurity.CsrfSpec::disable)
			.authorizeExchange((exchanges) -> exchanges.anyExchange().permitAll())
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
		Mono<String> held() {
			// a future of its own: cancelling the request leaves the others held
			return Mono.fromFuture(HeldCalls.released().thenApply((released) -> "held"));
		}

		@GetMapping("/quick")
		Mono<String> quick() {
			return Mono.just("quick");
		}

		@GetMapping("/reports/{id}")
		Mono<String> report(@PathVariable String id) {
			return Mono.just("report " + id);
		}

		@GetMapping("/internal/ping")
		Mono<String> ping() {
			return Mono.just("pong");
		}

		@GetMapping("/status/{code}")
		Mono<ResponseEntity<String>> status(@PathVariable int code) {
			return Mono.just(ResponseEntity.status(code).body("status " + code));
		}

		@GetMapping("/boom")
		Mono<String> boom() {
			return Mono.error(new IllegalStateException("boom"));
		}

		@GetMapping("/missing")
		Mono<String> missing() {
			return Mono.error(new ResponseStatusException(HttpStatus.NOT_FOUND, "no such thing"));
		}

		@GetMapping(path = "/stream", produces = MediaType.TEXT_EVENT_STREAM_VALUE)
		Flux<String> stream() {
			return Flux.concat(Mono.just("start"),
					Mono.fromFuture(HeldCalls.released().thenApply((released) -> "end")));
		}

	}

	@RestController
	@OverloadPriority(RequestPriority.SHEDDABLE)
	static class SearchController {

		@GetMapping("/search")
		Mono<String> search() {
			return Mono.just("search");
		}

		@OverloadPriority(RequestPriority.CRITICAL)
		@GetMapping("/search/urgent")
		Mono<String> urgent() {
			return Mono.just("urgent");
		}

	}

}
