package io.github.ratelimit;

import java.time.Duration;
import java.util.List;

import io.github.ratelimit.store.RateLimitDecision;

/**
 * Thrown when a {@link RateLimited} method is called beyond its limit. In a web request
 * it becomes a {@code 429 Too Many Requests} even when the application has its own
 * catch-all exception handler.
 */
public class RateLimitExceededException extends RuntimeException {

	private static final long serialVersionUID = 1L;

	private final transient List<RateLimitDecision> decisions;

	private final Duration retryAfter;

	/**
	 * Creates an exception from the decisions of every limit applied to the call.
	 * @param decisions all decisions, at least one of which rejected the call
	 */
	public RateLimitExceededException(List<RateLimitDecision> decisions) {
		super(message(decisions));
		this.decisions = List.copyOf(decisions);
		long retryMicros = 0;
		for (RateLimitDecision decision : decisions) {
			if (decision.rejects()) {
				retryMicros = Math.max(retryMicros, decision.retryAfterMicros());
			}
		}
		this.retryAfter = Duration.ofNanos(retryMicros * 1_000);
	}

	/**
	 * Creates an exception for a call that was not admitted for another reason than a
	 * rejection, such as a caller interrupted while it waited for its permit.
	 * @param message the detail message
	 * @param decisions decisions of every limit applied to the call
	 * @param retryAfter how long to wait before calling again
	 */
	public RateLimitExceededException(String message, List<RateLimitDecision> decisions, Duration retryAfter) {
		super(message);
		this.decisions = List.copyOf(decisions);
		this.retryAfter = retryAfter;
	}

	/**
	 * How long to wait before a call of the same cost would be admitted.
	 * @return the retry-after duration
	 */
	public Duration getRetryAfter() {
		return this.retryAfter;
	}

	/**
	 * Names of the limits that rejected the call.
	 * @return the violated limit names
	 */
	public List<String> getViolatedLimits() {
		return this.decisions.stream().filter(RateLimitDecision::rejects).map((d) -> d.limit().name()).toList();
	}

	/**
	 * Decisions of every limit applied to the call, allowed ones included.
	 * @return the decisions
	 */
	public List<RateLimitDecision> getDecisions() {
		return this.decisions;
	}

	private static String message(List<RateLimitDecision> decisions) {
		List<String> violated = decisions.stream().filter(RateLimitDecision::rejects).map((d) -> d.limit().name()).toList();
		long retryMicros = decisions.stream()
			.filter(RateLimitDecision::rejects)
			.mapToLong(RateLimitDecision::retryAfterMicros)
			.max()
			.orElse(0);
		return "Rate limit exceeded for " + violated + "; retry after " + Duration.ofNanos(retryMicros * 1_000);
	}

}
