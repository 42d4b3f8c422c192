package io.github.ratelimit.internal.webflux;

import org.springframework.core.Ordered;
import org.springframework.core.annotation.Order;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatusCode;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.ControllerAdvice;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.server.ServerWebExchange;

import io.github.ratelimit.RateLimitExceededException;
import io.github.ratelimit.RateLimitUnavailableException;
import io.github.ratelimit.internal.pipeline.ProblemResponse;
import io.github.ratelimit.internal.pipeline.RequestLimits;
import io.github.ratelimit.internal.pipeline.RequestRateLimiter;

/**
 * Answers a {@link RateLimitExceededException} that a rate limited service bean throws
 * or signals while a WebFlux handler runs with {@code 429}, and a
 * {@link RateLimitUnavailableException} with {@code 503}. Ordered first, so an
 * application's catch-all {@code @ExceptionHandler} cannot swallow them.
 */
@ControllerAdvice
@Order(Ordered.HIGHEST_PRECEDENCE)
public class RateLimitExceptionAdvice {

	private final RequestRateLimiter limiter;

	/**
	 * Creates the advice.
	 * @param limiter renders the answers
	 */
	public RateLimitExceptionAdvice(RequestRateLimiter limiter) {
		this.limiter = limiter;
	}

	/**
	 * The {@code 429} for a rejected call.
	 * @param ex the rejection
	 * @param exchange the exchange
	 * @return the problem response
	 */
	@ExceptionHandler(RateLimitExceededException.class)
	public ResponseEntity<byte[]> exceeded(RateLimitExceededException ex, ServerWebExchange exchange) {
		RequestLimits state = exchange.getAttribute(RequestLimits.ATTRIBUTE);
		return entity(this.limiter.rejection(state, ex.getDecisions()));
	}

	/**
	 * The {@code 503} for fail-closed limits whose store is down.
	 * @param ex what could not be decided
	 * @param exchange the exchange
	 * @return the problem response
	 */
	@ExceptionHandler(RateLimitUnavailableException.class)
	public ResponseEntity<byte[]> unavailable(RateLimitUnavailableException ex, ServerWebExchange exchange) {
		RequestLimits state = exchange.getAttribute(RequestLimits.ATTRIBUTE);
		return entity(this.limiter.unavailableAsync(state, ex));
	}

	private static ResponseEntity<byte[]> entity(ProblemResponse problem) {
		HttpHeaders headers = new HttpHeaders();
		problem.headers().forEach(headers::set);
		headers.set(HttpHeaders.CONTENT_TYPE, ProblemResponse.CONTENT_TYPE);
		return new ResponseEntity<>(problem.body(), headers, HttpStatusCode.valueOf(problem.status()));
	}

}
