package io.github.ratelimit;

import java.time.Duration;
import java.util.List;

/**
 * Thrown when a fail-closed limit cannot be decided because its store is failing. In a web
 * request it becomes a {@code 503 Service Unavailable} with {@code Retry-After}.
 */
public class RateLimitUnavailableException extends RuntimeException {

	private static final long serialVersionUID = 1L;

	private final List<String> limits;

	private final Duration retryAfter;

	/**
	 * Creates an exception.
	 * @param limits names of the fail-closed limits that could not be decided
	 * @param retryAfter when the store will be tried again
	 * @param cause the store failure, if any
	 */
	public RateLimitUnavailableException(List<String> limits, Duration retryAfter, Throwable cause) {
		super("Rate limit store unavailable for fail-closed limits " + limits + "; retry after " + retryAfter, cause);
		this.limits = List.copyOf(limits);
		this.retryAfter = retryAfter;
	}

	/**
	 * Names of the fail-closed limits that could not be decided.
	 * @return the limit names
	 */
	public List<String> getLimits() {
		return this.limits;
	}

	/**
	 * When the store will be tried again.
	 * @return the retry-after duration
	 */
	public Duration getRetryAfter() {
		return this.retryAfter;
	}

}
