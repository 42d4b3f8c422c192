package io.github.ratelimit.internal.local;

import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.Predicate;

import io.github.ratelimit.internal.core.RateLimitClock;
import io.github.ratelimit.internal.core.ThrottledLog;
import io.github.ratelimit.store.RateLimit;

/**
 * How a {@link LocalFirstRateLimitStore} decides and syncs.
 *
 * @param clock this instance's clock
 * @param syncInterval time between two syncs with the shared store
 * @param exact limits decided by the shared store on every request
 * @param maxShares most buckets with a share on this instance; further buckets are decided
 * by the shared store
 * @param failureLog throttles messages about failed syncs
 * @param warn where those messages go
 */
public record LocalFirstSettings(RateLimitClock clock, Duration syncInterval, Predicate<RateLimit> exact,
		int maxShares, ThrottledLog failureLog, Consumer<String> warn) {

	public LocalFirstSettings {
		Objects.requireNonNull(clock, "clock must not be null");
		Objects.requireNonNull(exact, "exact must not be null");
		Objects.requireNonNull(failureLog, "failureLog must not be null");
		Objects.requireNonNull(warn, "warn must not be null");
		if (syncInterval.isNegative() || syncInterval.isZero()) {
			throw new IllegalArgumentException("syncInterval must be positive: " + syncInterval);
		}
		if (maxShares < 0) {
			throw new IllegalArgumentException("maxShares must not be negative: " + maxShares);
		}
	}

	/**
	 * The sync interval in microseconds, at least one.
	 * @return microseconds
	 */
	long intervalMicros() {
		return Math.max(1, TimeUnit.NANOSECONDS.toMicros(this.syncInterval.toNanos()));
	}

}
