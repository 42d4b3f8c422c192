package io.github.ratelimit.internal.client;

import java.time.Duration;
import java.util.Set;

import org.springframework.http.HttpMethod;

/**
 * How {@link RateLimitRetryInterceptor} retries: which requests and responses, how often,
 * and for how long.
 *
 * @param maxAttempts attempts in total, the first one included; 1 never retries
 * @param maxTotalTime time budget of one call, from its first attempt; a wait that would
 * end beyond it is not started
 * @param initialDelay cap of the first back-off when the server gives no delay
 * @param maxDelay cap of every back-off; a longer delay demanded by the server gives up
 * @param multiplier growth of the back-off cap from one retry to the next
 * @param methods request methods that are retried
 * @param statuses response statuses that are retried
 */
public record RetrySettings(int maxAttempts, Duration maxTotalTime, Duration initialDelay, Duration maxDelay,
		double multiplier, Set<HttpMethod> methods, Set<Integer> statuses) {

	/** The idempotent methods of RFC 9110: repeating them has the effect of sending them once. */
	public static final Set<HttpMethod> IDEMPOTENT_METHODS = Set.of(HttpMethod.GET, HttpMethod.HEAD,
			HttpMethod.OPTIONS, HttpMethod.PUT, HttpMethod.DELETE, HttpMethod.TRACE);

	/** 429 Too Many Requests and 503 Service Unavailable. */
	public static final Set<Integer> RATE_LIMITED_STATUSES = Set.of(429, 503);

	/**
	 * Validates the settings.
	 * @throws IllegalArgumentException naming the value that is out of range
	 */
	public RetrySettings {
		if (maxAttempts < 1) {
			throw new IllegalArgumentException("maxAttempts must be at least 1: " + maxAttempts);
		}
		requirePositive("maxTotalTime", maxTotalTime);
		requirePositive("initialDelay", initialDelay);
		requirePositive("maxDelay", maxDelay);
		if (maxDelay.compareTo(initialDelay) < 0) {
			throw new IllegalArgumentException(
					"maxDelay must not be shorter than initialDelay: " + maxDelay + " < " + initialDelay);
		}
		if (!(multiplier >= 1)) {
			throw new IllegalArgumentException("multiplier must be at least 1: " + multiplier);
		}
		methods = Set.copyOf(methods);
		statuses = Set.copyOf(statuses);
		if (methods.isEmpty()) {
			throw new IllegalArgumentException("methods must not be empty");
		}
		for (int status : statuses) {
			if (status < 400 || status > 599) {
				throw new IllegalArgumentException("statuses must be error statuses (400 to 599): " + status);
			}
		}
		if (statuses.isEmpty()) {
			throw new IllegalArgumentException("statuses must not be empty");
		}
	}

	/**
	 * The defaults of {@code ratelimit.client.retry}: 3 attempts within 30 seconds, back-off
	 * from 100 ms doubling up to 10 s, idempotent methods, statuses 429 and 503.
	 * @return the default settings
	 */
	public static RetrySettings defaults() {
		return new RetrySettings(3, Duration.ofSeconds(30), Duration.ofMillis(100), Duration.ofSeconds(10), 2.0,
				IDEMPOTENT_METHODS, RATE_LIMITED_STATUSES);
	}

	/**
	 * Copy with another attempt bound.
	 * @param maxAttempts attempts in total, the first one included
	 * @return the new settings
	 */
	public RetrySettings withMaxAttempts(int maxAttempts) {
		return new RetrySettings(maxAttempts, this.maxTotalTime, this.initialDelay, this.maxDelay, this.multiplier,
				this.methods, this.statuses);
	}

	/**
	 * Copy with another time budget.
	 * @param maxTotalTime time budget of one call
	 * @return the new settings
	 */
	public RetrySettings withMaxTotalTime(Duration maxTotalTime) {
		return new RetrySettings(this.maxAttempts, maxTotalTime, this.initialDelay, this.maxDelay, this.multiplier,
				this.methods, this.statuses);
	}

	/**
	 * Copy with another back-off.
	 * @param initialDelay cap of the first back-off
	 * @param maxDelay cap of every back-off and longest server delay honoured
	 * @param multiplier growth of the cap per retry
	 * @return the new settings
	 */
	public RetrySettings withBackOff(Duration initialDelay, Duration maxDelay, double multiplier) {
		return new RetrySettings(this.maxAttempts, this.maxTotalTime, initialDelay, maxDelay, multiplier,
				this.methods, this.statuses);
	}

	/**
	 * Copy retrying other methods, such as POST for an endpoint known to be idempotent.
	 * @param methods request methods that are retried
	 * @return the new settings
	 */
	public RetrySettings withMethods(Set<HttpMethod> methods) {
		return new RetrySettings(this.maxAttempts, this.maxTotalTime, this.initialDelay, this.maxDelay,
				this.multiplier, methods, this.statuses);
	}

	/**
	 * Copy retrying other statuses.
	 * @param statuses response statuses that are retried
	 * @return the new settings
	 */
	public RetrySettings withStatuses(Set<Integer> statuses) {
		return new RetrySettings(this.maxAttempts, this.maxTotalTime, this.initialDelay, this.maxDelay,
				this.multiplier, this.methods, statuses);
	}

	private static void requirePositive(String name, Duration value) {
		if (value == null || value.isNegative() || value.isZero()) {
			throw new IllegalArgumentException(name + " must be positive: " + value);
		}
	}

}
