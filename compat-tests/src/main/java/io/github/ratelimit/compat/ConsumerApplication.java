package io.github.ratelimit.compat;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.http.HttpStatus;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.bind.annotation.RestControllerAdvice;

import io.github.ratelimit.RateLimited;

/**
 * An application written from the README, as a user would: annotated handlers, route
 * limits in {@code application.properties}, and a catch-all exception handler. Its
 * controllers serve on Spring MVC and on WebFlux alike.
 */
@SpringBootApplication
public class ConsumerApplication {

	/** Path of the handler that fails, answered by the catch-all exception handler. */
	public static final String FAILING = "/failing";

	public static void main(String[] args) {
		SpringApplication.run(ConsumerApplication.class, args);
	}

	@RestController
	static class ThingsController {

		@RateLimited(capacity = 3, period = "1h")
		@GetMapping("/things/{id}")
		String thing(@PathVariable String id) {
			return "thing " + id;
		}

		/** Limited by {@code ratelimit.routes} alone. */
		@GetMapping("/routed/{id}")
		String routed(@PathVariable String id) {
			return "routed " + id;
		}

		/** Limited by {@code ratelimit.routes} alone; reads its body. */
		@PostMapping("/uploads/{id}")
		String upload(@PathVariable String id, @RequestBody String body) {
			return "upload " + id + ": " + body.length();
		}

		/** Names the thread the handler runs on. */
		@RateLimited(capacity = 100, period = "1h")
		@GetMapping("/thread")
		String thread() {
			return Thread.currentThread().getName();
		}

		/** Not limited. */
		@GetMapping("/plain")
		String plain() {
			return "plain";
		}

		/** Not limited; answered a little later, off the request's thread, on either stack. */
		@GetMapping("/later")
		CompletableFuture<String> later() {
			return CompletableFuture.supplyAsync(() -> "later",
					CompletableFuture.delayedExecutor(30, TimeUnit.MILLISECONDS));
		}

		@GetMapping(FAILING)
		String failing() {
			throw new IllegalStateException("failed on purpose");
		}

	}

	/** What many applications have: every exception becomes the application's own 500. */
	@RestControllerAdvice
	static class CatchAllExceptionHandler {

		@ExceptionHandler(Exception.class)
		ResponseEntity<String> anyException(Exception ex) {
			return ResponseEntity.status(HttpStatus.INTERNAL_SERVER_ERROR).body("caught " + ex.getClass().getSimpleName());
		}

	}

}
