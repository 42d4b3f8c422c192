package io.github.ratelimit.e2e;

import java.security.Principal;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.webflux.autoconfigure.WebFluxRegistrations;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.http.HttpStatus;
import org.springframework.http.ResponseEntity;
import org.springframework.security.config.Customizer;
import org.springframework.security.config.web.server.ServerHttpSecurity;
import org.springframework.security.core.userdetails.MapReactiveUserDetailsService;
import org.springframework.security.core.userdetails.User;
import org.springframework.security.web.server.SecurityWebFilterChain;
import org.springframework.stereotype.Service;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.bind.annotation.RestControllerAdvice;
import org.springframework.web.method.HandlerMethod;
import org.springframework.web.reactive.result.method.annotation.RequestMappingHandlerMapping;
import org.springframework.web.server.ResponseStatusException;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebFilter;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.KeySource;
import io.github.ratelimit.RateLimited;
import io.github.ratelimit.internal.core.RateLimitClock;

/**
 * A reactive service limited the ways a servlet one is, with reactive Spring Security,
 * on a clock the tests control.
 */
@SpringBootConfiguration
@EnableAutoConfiguration(excludeName = "org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration")
@Import({ ReactiveE2eApplication.ThingsController.class, ReactiveE2eApplication.Quotes.class,
		ReactiveE2eApplication.CatchAll.class, ReactiveSettlingHandlers.class })
public class ReactiveE2eApplication {

	/** The clock every limit decides on; tests move it forward instead of sleeping. */
	public static final AtomicLong NOW = new AtomicLong(1_700_000_000_000_000L);

	/**
	 * Moves the test clock.
	 * @param duration how far
	 */
	public static void advance(Duration duration) {
		NOW.addAndGet(duration.toNanos() / 1_000);
	}

	@Bean
	RateLimitClock rateLimitClock() {
		return NOW::get;
	}

	/**
	 * Fails {@code /failing-filter} with a 503 from a filter after the limiter's: the error
	 * travels out through the filters and is answered by WebFlux's exception handling.
	 */
	@Bean
	WebFilter failingFilter() {
		return (exchange, chain) -> "/failing-filter".equals(exchange.getRequest().getPath().value())
				? Mono.error(new ResponseStatusException(HttpStatus.SERVICE_UNAVAILABLE, "failed in a filter"))
				: chain.filter(exchange);
	}

	/** How many times each path was looked up in the handler mapping, by anyone. */
	static final Map<String, AtomicInteger> HANDLER_LOOKUPS = new ConcurrentHashMap<>();

	/** The annotated handlers' mapping, counting its lookups. */
	@Bean
	WebFluxRegistrations countingHandlerLookups() {
		return new WebFluxRegistrations() {

			@Override
			public RequestMappingHandlerMapping getRequestMappingHandlerMapping() {
				return new RequestMappingHandlerMapping() {

					@Override
					public Mono<HandlerMethod> getHandlerInternal(ServerWebExchange exchange) {
						HANDLER_LOOKUPS.computeIfAbsent(exchange.getRequest().getPath().value(), (path) -> new AtomicInteger())
							.incrementAndGet();
						return super.getHandlerInternal(exchange);
					}

				};
			}

		};
	}

	@Bean
	MapReactiveUserDetailsService users() {
		return new MapReactiveUserDetailsService(
				User.withUsername("alice").password("{noop}alice-pw").roles("USER").build(),
				User.withUsername("bob").password("{noop}bob-pw").roles("USER").build(),
				User.withUsername("carol").password("{noop}carol-pw").authorities("ROLE_USER", "PLAN_pro").build());
	}

	@Bean
	SecurityWebFilterChain security(ServerHttpSecurity http) {
		return http.csrf(ServerHttpSecurity.CsrfSpec::disable)
			.authorizeExchange((exchanges) -> exchanges.pathMatchers("/private/**", "/members/**").authenticated().anyExchange().permitAll())
			.httpBasic(Customizer.withDefaults())
			.build();
	}

	@RestController
	static class ThingsController {

		private final Quotes quotes;

		ThingsController(Quotes quotes) {
			this.quotes = quotes;
		}

		@RateLimited(capacity = 5, period = "1m")
		@GetMapping("/things/{id}")
		Mono<String> thing(@PathVariable String id) {
			return Mono.just("thing " + id);
		}

		@RateLimited(capacity = 2, period = "1m")
		@GetMapping("/plain/{id}")
		String plain(@PathVariable String id) {
			return "plain " + id;
		}

		@RateLimited(capacity = 2, period = "1m", key = KeySource.GLOBAL)
		@GetMapping("/stream")
		Flux<String> stream() {
			return Flux.just("a", "b");
		}

		@RateLimited(capacity = 3, period = "1h", key = KeySource.IP)
		@RateLimited(capacity = 2, period = "1h", keyExpression = "#username")
		@PostMapping("/login-attempt")
		Mono<String> loginAttempt(@RequestParam String username) {
			return Mono.just("checked " + username);
		}

		@RateLimited(name = "big", capacity = 10, period = "1h", key = KeySource.GLOBAL)
		@RateLimited(name = "small", capacity = 2, period = "1h", key = KeySource.GLOBAL, cost = 2)
		@GetMapping("/combined")
		Mono<String> combined() {
			return Mono.just("combined");
		}

		@RateLimited(name = "big", capacity = 10, period = "1h", key = KeySource.GLOBAL)
		@GetMapping("/big-only")
		Mono<String> bigOnly() {
			return Mono.just("big");
		}

		@RateLimited(capacity = 2, period = "1h", key = KeySource.PRINCIPAL)
		@GetMapping("/private/me")
		Mono<String> me(Principal principal) {
			return Mono.just(principal.getName());
		}

		@RateLimited(name = "planned", capacity = 1, period = "1h", key = KeySource.PRINCIPAL)
		@GetMapping("/private/planned")
		Mono<String> planned(Principal principal) {
			return Mono.just(principal.getName());
		}

		@RateLimited(capacity = 2, period = "1h", key = KeySource.TENANT)
		@GetMapping("/tenant")
		Mono<String> tenant() {
			return Mono.just("tenant");
		}

		/** Answered off the event loop, a little later. */
		@GetMapping("/later")
		Mono<String> later() {
			return Mono.delay(Duration.ofMillis(30)).thenReturn("later");
		}

		@GetMapping("/quote")
		Mono<String> quote() {
			return this.quotes.next();
		}

		@GetMapping("/routed/{id}")
		Mono<String> routed(@PathVariable String id) {
			return Mono.just("routed " + id);
		}

		@GetMapping("/daily/{id}")
		Mono<String> daily(@PathVariable String id) {
			return Mono.just("daily " + id);
		}

		@RateLimited(name = "exports", algorithm = Algorithm.CONCURRENCY, capacity = 1, key = KeySource.IP,
				maxWait = "5s")
		@GetMapping("/export/{id}")
		Mono<String> export(@PathVariable String id) {
			// held off the event loop until the test opens the gate
			return Mono.fromCallable(() -> {
				ExportGate.entered();
				ExportGate.await();
				return "export " + id;
			}).subscribeOn(Schedulers.boundedElastic());
		}

		/** Streams its export: a first line at once, the rest once the gate opens. */
		@RateLimited(name = "streamed-exports", algorithm = Algorithm.CONCURRENCY, capacity = 1, key = KeySource.IP)
		@GetMapping("/export-stream/{id}")
		Flux<String> exportStream(@PathVariable String id) {
			Mono<String> rest = Mono.fromCallable(() -> {
				ExportGate.entered();
				ExportGate.await();
				return "end of export " + id + "\n";
			}).subscribeOn(Schedulers.boundedElastic());
			return Flux.concat(Mono.just("start of export " + id + "\n"), rest);
		}

		@RateLimited(name = "streamed-exports", algorithm = Algorithm.CONCURRENCY, capacity = 1, key = KeySource.IP)
		@GetMapping("/export-stream-now/{id}")
		Mono<String> exportStreamNow(@PathVariable String id) {
			return Mono.just("export " + id);
		}

		@RateLimited(name = "exports", algorithm = Algorithm.CONCURRENCY, capacity = 1, key = KeySource.IP)
		@GetMapping("/export-now/{id}")
		Mono<String> exportNow(@PathVariable String id) {
			return Mono.just("export " + id);
		}

		/** A completion spends tokens from one budget and a request from another. */
		@RateLimited(name = "completion-tokens", capacity = 1_000, period = "1m", cost = 400, unit = "tokens",
				key = KeySource.IP)
		@RateLimited(name = "completions", capacity = 10, period = "1m", key = KeySource.IP)
		@GetMapping("/completion/{id}")
		Mono<String> completion(@PathVariable String id) {
			return Mono.just("completion " + id);
		}

		/** Blocking work off the event loop, which goes on when the exchange is cancelled. */
		@RateLimited(name = "slow-reports", capacity = 3, period = "1m", key = KeySource.IP)
		@GetMapping("/slow-report/{id}")
		Mono<String> slowReport(@PathVariable String id) {
			return Mono.fromCallable(() -> {
				Hangups.SLOW.work(Duration.ofMillis(1_500));
				return "report " + id;
			}).subscribeOn(Schedulers.boundedElastic());
		}

		/** Lease of 3 seconds: longer than the work, short enough to see it end on Redis's clock. */
		@RateLimited(name = "busy", algorithm = Algorithm.CONCURRENCY, capacity = 2, period = "3s", key = KeySource.IP)
		@GetMapping("/busy/{id}")
		Mono<String> busy(@PathVariable String id) {
			return Mono.fromCallable(() -> {
				Hangups.BUSY.work(Duration.ofMillis(400));
				return "busy " + id;
			}).subscribeOn(Schedulers.boundedElastic());
		}

		@GetMapping("/private/routed")
		Mono<String> privateRouted(Principal principal) {
			return Mono.just(principal.getName());
		}

		@RateLimited(name = "refund-handler", capacity = 1, period = "1h", key = KeySource.GLOBAL)
		@GetMapping("/refund/{id}")
		Mono<String> refund(@PathVariable String id) {
			return Mono.just("refund " + id);
		}

		@RateLimited(name = "failed-sign-ins", capacity = 5, period = "15m", keyExpression = "#username",
				countStatuses = "401")
		@PostMapping("/sign-in")
		Mono<String> signIn(@RequestParam String username, @RequestParam String password) {
			if (!"right".equals(password)) {
				return Mono.error(new WrongPassword());
			}
			return Mono.just("welcome " + username);
		}

		@ExceptionHandler(WrongPassword.class)
		ResponseEntity<String> wrongPassword() {
			return ResponseEntity.status(HttpStatus.UNAUTHORIZED).body("wrong password");
		}

		@GetMapping("/members/me")
		Mono<String> member(Principal principal) {
			return Mono.just(principal.getName());
		}

		@RateLimited(algorithm = Algorithm.TOKEN_BUCKET, capacity = 1, refillTokens = 10, period = "1s",
				key = KeySource.GLOBAL, maxWait = "2s")
		@GetMapping("/patient")
		Mono<String> patient() {
			return Mono.just("patient");
		}

		@RateLimited(algorithm = Algorithm.LEAKY_BUCKET, capacity = 3, refillTokens = 20, period = "1s",
				key = KeySource.GLOBAL)
		@GetMapping("/leaky")
		Mono<String> leaky() {
			return Mono.just("leaky");
		}

	}

	/** A failed sign-in, answered 401 by an exception handler. */
	static class WrongPassword extends RuntimeException {

		WrongPassword() {
			super("wrong password");
		}

	}

	/** A reactive service, limited like any bean: each subscription is one call. */
	@Service
	static class Quotes {

		@RateLimited(name = "quotes", capacity = 2, period = "1h", key = KeySource.GLOBAL)
		public Mono<String> next() {
			return Mono.just("quote");
		}

	}

	/** The kind of catch-all handler applications write; it must not swallow the 429. */
	@RestControllerAdvice
	static class CatchAll {

		@ExceptionHandler(Exception.class)
		ResponseEntity<String> handle(Exception ex) {
			return ResponseEntity.status(HttpStatus.OK).body("caught " + ex.getClass().getSimpleName());
		}

	}

}
