package io.github.ratelimit.benchmarks.overload;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication.Type;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.resilience.InvocationRejectedException;
import org.springframework.resilience.annotation.ConcurrencyLimit;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

import reactor.core.publisher.Mono;

/**
 * The benchmark's endpoints: {@code GET /work}, one call to the saturated dependency, and
 * {@code GET /bench/state}, the calls in the dependency and the limit of the fixed and
 * Netflix variants (this library's is at {@code /actuator/ratelimits}).
 */
final class WorkController {

	private WorkController() {
	}

	static String state(SaturatedDependency dependency, ObjectProvider<LimitView> limit) {
		LimitView view = limit.getIfAvailable();
		String overload = (view != null)
				? ",\"overload\":{\"limit\":" + view.limit() + ",\"inFlight\":" + view.inFlight() + "}" : "";
		return "{\"dependencyInFlight\":" + dependency.inFlight() + overload + "}";
	}

	/**
	 * The endpoints on the servlet stack: the handler sleeps on its request thread. Its
	 * {@code @ConcurrencyLimit} (Spring Framework 7, rejecting rather than blocking) acts
	 * only in the {@code spring} variant, which enables resilient methods.
	 */
	@RestController
	@ConditionalOnWebApplication(type = Type.SERVLET)
	static class Servlet {

		private final SaturatedDependency dependency;

		private final ObjectProvider<LimitView> limit;

		Servlet(SaturatedDependency dependency, ObjectProvider<LimitView> limit) {
			this.dependency = dependency;
			this.limit = limit;
		}

		@GetMapping(path = "/work", produces = MediaType.TEXT_PLAIN_VALUE)
		@ConcurrencyLimit(limitString = "${bench.fixed-limit:${bench.knee}}",
				policy = ConcurrencyLimit.ThrottlePolicy.REJECT)
		public String work() throws InterruptedException {
			this.dependency.serve();
			return "done";
		}

		@ExceptionHandler(InvocationRejectedException.class)
		ResponseEntity<Void> rejected() {
			return ResponseEntity.status(HttpStatus.SERVICE_UNAVAILABLE).build();
		}

		@GetMapping(path = "/bench/state", produces = MediaType.APPLICATION_JSON_VALUE)
		String state() {
			return WorkController.state(this.dependency, this.limit);
		}

	}

	/** The endpoints on WebFlux: the handler waits with {@code Mono.delay}. */
	@RestController
	@ConditionalOnWebApplication(type = Type.REACTIVE)
	static class Reactive {

		private final SaturatedDependency dependency;

		private final ObjectProvider<LimitView> limit;

		Reactive(SaturatedDependency dependency, ObjectProvider<LimitView> limit) {
			this.dependency = dependency;
			this.limit = limit;
		}

		@GetMapping(path = "/work", produces = MediaType.TEXT_PLAIN_VALUE)
		Mono<String> work() {
			return this.dependency.serveReactive().thenReturn("done");
		}

		@GetMapping(path = "/bench/state", produces = MediaType.APPLICATION_JSON_VALUE)
		Mono<String> state() {
			return Mono.fromSupplier(() -> WorkController.state(this.dependency, this.limit));
		}

	}

}
