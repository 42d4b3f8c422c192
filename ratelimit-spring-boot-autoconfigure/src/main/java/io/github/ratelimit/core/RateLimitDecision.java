package io.github.ratelimit.core;

import java.util.Objects;

/**
 * The answer of one limit for one request.
 *
 * @param limit the limit that decided
 * @param allowed whether the request was admitted
 * @param remaining quota units left after this request (before it, when rejected)
 * @param resetMicros time until at least one more unit of quota becomes available; 0 when
 * the quota is full
 * @param retryAfterMicros when rejected, time until a request of the same cost would be
 * admitted; 0 when allowed
 * @param delayMicros when allowed by a leaky bucket, how long the request waits for its
 * drain slot; when allowed by reserving a future slot (a caller waiting for a permit), how
 * long it waits for that slot; 0 otherwise
 */
public record RateLimitDecision(RateLimit limit, boolean allowed, long remaining, long resetMicros,
		long retryAfterMicros, long delayMicros) {

	public RateLimitDecision {
		Objects.requireNonNull(limit, "limit must not be null");
		if (remaining < 0) {
			throw new IllegalArgumentException("remaining must not be negative: " + remaining);
		}
		if (resetMicros < 0 || retryAfterMicros < 0 || delayMicros < 0) {
			throw new IllegalArgumentException("times must not be negative");
		}
		if (!allowed && retryAfterMicros == 0) {
			throw new IllegalArgumentException("a rejection needs a positive retry-after");
		}
	}

	/**
	 * Whether this decision turns the request away: a rejection by an enforced limit. A
	 * shadow limit's rejection is only recorded.
	 * @return whether the request is rejected by this limit
	 */
	public boolean rejects() {
		return !this.allowed && !this.limit.shadow();
	}

	/**
	 * This admitting decision as it stands when the request was not committed after all
	 * (another limit of the same request rejected it): the cost is still available.
	 * @param cost the cost that was not taken
	 * @return the decision with the quota left before the request
	 */
	public RateLimitDecision uncommitted(long cost) {
		if (!this.allowed) {
			return this;
		}
		return new RateLimitDecision(this.limit, true, Math.min(this.limit.capacity(), this.remaining + cost),
				this.resetMicros, 0, 0);
	}

	static RateLimitDecision allowed(RateLimit limit, long remaining, long resetMicros, long delayMicros) {
		return new RateLimitDecision(limit, true, remaining, resetMicros, 0, delayMicros);
	}

	static RateLimitDecision rejected(RateLimit limit, long remaining, long resetMicros, long retryAfterMicros) {
		return new RateLimitDecision(limit, false, remaining, resetMicros, retryAfterMicros, 0);
	}

}
