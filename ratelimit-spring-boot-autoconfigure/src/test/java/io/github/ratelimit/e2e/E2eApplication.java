package io.github.ratelimit.e2e;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.http.HttpStatus;
import org.springframework.http.ResponseEntity;
import org.springframework.security.config.Customizer;
import org.springframework.security.config.annotation.web.builders.HttpSecurity;
import org.springframework.security.core.userdetails.User;
import org.springframework.security.core.userdetails.UserDetailsService;
import org.springframework.security.provisioning.InMemoryUserDetailsManager;
import org.springframework.security.web.SecurityFilterChain;
import org.springframework.stereotype.Service;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.bind.annotation.RestControllerAdvice;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.KeySource;
import io.github.ratelimit.RateLimited;
import io.github.ratelimit.internal.core.RateLimitClock;

/**
 * A service exercising every way of applying limits, on a clock the tests control.
 */
@SpringBootConfiguration
@EnableAutoConfiguration(excludeName = "org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration")
@Import({ E2eApplication.ThingsController.class, E2eApplication.Quotes.class, E2eApplication.CatchAll.class,
		SettlingHandlers.class })
public class E2eApplication {

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
	 * Users whose names would share a bucket if key separators and braces were stripped or
	 * replaced, or names were cut at 64 characters. Each has the password {@code pw}.
	 */
	public static final List<String> LOOKALIKE_USERS = List.of("{bob}", "a}b{c", "a_b_c", "abc", "carol admin",
			"carol_admin", "x".repeat(64) + "1", "x".repeat(64) + "2", "x".repeat(64));

	@Bean
	UserDetailsService users() {
		InMemoryUserDetailsManager users = new InMemoryUserDetailsManager(
				User.withUsername("alice").password("{noop}alice-pw").roles("USER").build(),
				User.withUsername("bob").password("{noop}bob-pw").roles("USER").build(),
				User.withUsername("carol").password("{noop}carol-pw").authorities("ROLE_USER", "PLAN_pro").build());
		LOOKALIKE_USERS
			.forEach((name) -> users.createUser(User.withUsername(name).password("{noop}pw").roles("USER").build()));
		return users;
	}

	@Bean
	SecurityFilterChain security(HttpSecurity http) throws Exception {
		http.csrf((csrf) -> csrf.disable())
			.authorizeHttpRequests((requests) -> requests.requestMatchers("/private/**", "/members/**")
				.authenticated()
				.anyRequest()
				.permitAll())
			.httpBasic(Customizer.withDefaults())
			.formLogin(Customizer.withDefaults());
		return http.build();
	}

	@RestController
	static class ThingsController {

		private final Quotes quotes;

		ThingsController(Quotes quotes) {
			this.quotes = quotes;
		}

		@RateLimited(capacity = 5, period = "1m")
		@GetMapping("/things/{id}")
		String thing(@PathVariable String id) {
			return "thing " + id;
		}

		@RateLimited(name = "tuned", capacity = 100, period = "1h")
		@GetMapping("/tuned")
		String tuned() {
			return "tuned";
		}

		@RateLimited(capacity = 3, period = "1h", key = KeySource.IP)
		@RateLimited(capacity = 2, period = "1h", keyExpression = "#username")
		@PostMapping("/login-attempt")
		String loginAttempt(@RequestParam String username) {
			return "checked " + username;
		}

		@RateLimited(name = "big", capacity = 10, period = "1h", key = KeySource.GLOBAL)
		@RateLimited(name = "small", capacity = 2, period = "1h", key = KeySource.GLOBAL, cost = 2)
		@GetMapping("/combined")
		String combined() {
			return "combined";
		}

		@RateLimited(name = "big", capacity = 10, period = "1h", key = KeySource.GLOBAL)
		@GetMapping("/big-only")
		String bigOnly() {
			return "big";
		}

		@RateLimited(capacity = 2, period = "1h", key = KeySource.PRINCIPAL)
		@GetMapping("/private/me")
		String me(java.security.Principal principal) {
			return principal.getName();
		}

		@RateLimited(name = "planned", capacity = 1, period = "1h", key = KeySource.PRINCIPAL)
		@GetMapping("/private/planned")
		String planned(java.security.Principal principal) {
			return principal.getName();
		}

		@RateLimited(algorithm = Algorithm.TOKEN_BUCKET, capacity = 1, refillTokens = 10, period = "1s",
				key = KeySource.GLOBAL, maxWait = "2s")
		@GetMapping("/patient")
		String patient() {
			return "patient";
		}

		@RateLimited(capacity = 2, period = "1h", key = KeySource.TENANT)
		@GetMapping("/tenant")
		String tenant() {
			return "tenant";
		}

		@GetMapping("/quote")
		String quote() {
			return this.quotes.next();
		}

		@GetMapping("/boom")
		String boom() {
			throw new IllegalStateException("boom");
		}

		@GetMapping("/routed/{id}")
		String routed(@PathVariable String id) {
			return "routed " + id;
		}

		@GetMapping("/daily/{id}")
		String daily(@PathVariable String id) {
			return "daily " + id;
		}

		@RateLimited(name = "exports", algorithm = Algorithm.CONCURRENCY, capacity = 1, key = KeySource.IP,
				maxWait = "5s")
		@GetMapping("/export/{id}")
		String export(@PathVariable String id) throws InterruptedException {
			ExportGate.entered();
			ExportGate.await();
			return "export " + id;
		}

		@RateLimited(name = "exports", algorithm = Algorithm.CONCURRENCY, capacity = 1, key = KeySource.IP)
		@GetMapping("/export-now/{id}")
		String exportNow(@PathVariable String id) {
			return "export " + id;
		}

		/** A completion spends tokens from one budget and a request from another. */
		@RateLimited(name = "completion-tokens", capacity = 1_000, period = "1m", cost = 400, unit = "tokens",
				key = KeySource.IP)
		@RateLimited(name = "completions", capacity = 10, period = "1m", key = KeySource.IP)
		@GetMapping("/completion/{id}")
		String completion(@PathVariable String id) {
			return "completion " + id;
		}

		@RateLimited(name = "slow-reports", capacity = 3, period = "1m", key = KeySource.IP)
		@GetMapping("/slow-report/{id}")
		String slowReport(@PathVariable String id) {
			Hangups.SLOW.work(Duration.ofMillis(1_500));
			return "report " + id;
		}

		/** Lease of 3 seconds: longer than the work, short enough to see it end on Redis's clock. */
		@RateLimited(name = "busy", algorithm = Algorithm.CONCURRENCY, capacity = 2, period = "3s", key = KeySource.IP)
		@GetMapping("/busy/{id}")
		String busy(@PathVariable String id) {
			Hangups.BUSY.work(Duration.ofMillis(400));
			return "busy " + id;
		}

		@RateLimited(name = "handler-and-route", capacity = 1, period = "1h", key = KeySource.PRINCIPAL)
		@GetMapping("/private/both")
		String both() {
			return "both";
		}

		@RateLimited(name = "refund-handler", capacity = 1, period = "1h", key = KeySource.GLOBAL)
		@GetMapping("/refund/{id}")
		String refund(@PathVariable String id) {
			return "refund " + id;
		}

		@RateLimited(capacity = 2, period = "1h", keyExpression = "#request.username")
		@PostMapping("/argument-named-request")
		String argumentNamedRequest(@org.springframework.web.bind.annotation.ModelAttribute Credentials request) {
			return "checked " + request.username();
		}

		@RateLimited(capacity = 2, period = "1h", keyExpression = "#missing.length()")
		@GetMapping("/broken-expression")
		String brokenExpression() {
			return "still served";
		}

		@RateLimited(capacity = 2, period = "1h", key = KeySource.IP)
		@org.springframework.web.bind.annotation.RequestMapping("/any-method")
		String anyMethod() {
			return "any";
		}

		@RateLimited(name = "outer", capacity = 2, period = "1h", key = KeySource.GLOBAL)
		@GetMapping("/outer")
		String outer() {
			try {
				return this.quotes.inner();
			}
			catch (io.github.ratelimit.RateLimitExceededException ex) {
				return "degraded";
			}
		}

		@RateLimited(name = "shadowed", capacity = 2, period = "1h", key = KeySource.GLOBAL)
		@GetMapping("/shadowed")
		String shadowed() {
			return "shadowed";
		}

		@RateLimited(name = "failed-sign-ins", capacity = 5, period = "15m", keyExpression = "#username",
				countStatuses = "401")
		@PostMapping("/sign-in")
		String signIn(@RequestParam String username, @RequestParam String password) {
			if (!"right".equals(password)) {
				throw new WrongPassword();
			}
			return "welcome " + username;
		}

		@ExceptionHandler(WrongPassword.class)
		ResponseEntity<String> wrongPassword() {
			return ResponseEntity.status(HttpStatus.UNAUTHORIZED).body("wrong password");
		}

		@GetMapping("/members/me")
		String member(java.security.Principal principal) {
			return principal.getName();
		}

		@GetMapping("/private/guarded")
		String guarded() {
			return "guarded";
		}

		@GetMapping("/private/routed")
		String privateRouted(java.security.Principal principal) {
			return principal.getName();
		}

		@RateLimited(algorithm = Algorithm.LEAKY_BUCKET, capacity = 3, refillTokens = 20, period = "1s",
				key = KeySource.GLOBAL)
		@GetMapping("/leaky")
		String leaky() {
			return "leaky";
		}

	}

	/** A failed sign-in, answered 401 by an exception handler. */
	static class WrongPassword extends RuntimeException {

		WrongPassword() {
			super("wrong password");
		}

	}

	/** A form whose parameter is named like the {@code #request} variable. */
	record Credentials(String username) {
	}

	/** A plain service, limited like any bean. */
	@Service
	@RateLimited(name = "quotes", capacity = 2, period = "1h", key = KeySource.GLOBAL)
	static class Quotes {

		public String next() {
			return "quote";
		}

		@RateLimited(name = "inner", capacity = 1, period = "1h", key = KeySource.GLOBAL)
		public String inner() {
			return "inner";
		}

	}

	/** The kind of catch-all handler applications write; it must not swallow the 429. */
	@RestControllerAdvice
	static class CatchAll {

		@ExceptionHandler(Exception.class)
		ResponseEntity<String> handle(Exception ex) {
			return ResponseEntity.status(HttpStatus.INTERNAL_SERVER_ERROR).body("caught " + ex.getClass().getSimpleName());
		}

	}

}
