package io.github.ratelimit.internal.core;

import java.util.Objects;
import java.util.function.Consumer;

/**
 * How a {@link FailoverRateLimitStore} falls back, and where it says so.
 *
 * @param fallbackFactor share of each limit the fallback enforces, in (0, 1]
 * @param breaker the breaker guarding the remote store
 * @param failureLog throttles failure messages
 * @param recoveryLog throttles recovery messages
 * @param warn where failure messages go
 * @param info where recovery messages go
 */
public record FailoverSettings(double fallbackFactor, CircuitBreaker breaker, ThrottledLog failureLog,
		ThrottledLog recoveryLog, Consumer<String> warn, Consumer<String> info) {

	public FailoverSettings {
		if (!(fallbackFactor > 0 && fallbackFactor <= 1)) {
			throw new IllegalArgumentException("fallbackFactor must be in (0, 1]: " + fallbackFactor);
		}
		Objects.requireNonNull(breaker, "breaker must not be null");
		Objects.requireNonNull(failureLog, "failureLog must not be null");
		Objects.requireNonNull(recoveryLog, "recoveryLog must not be null");
		Objects.requireNonNull(warn, "warn must not be null");
		Objects.requireNonNull(info, "info must not be null");
	}

}
