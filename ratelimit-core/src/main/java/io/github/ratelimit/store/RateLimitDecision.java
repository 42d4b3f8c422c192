package io.github.ratelimit.store;

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
 * @param windowMicros length of the quota window the decision was taken in, as advertised
 * in the {@code w} parameter of {@code RateLimit-Policy}: the limit's
 * {@link RateLimit#quotaWindowMicros() quota window}, except for a calendar quota, whose
 * current day, week or month it is (a day of 23 or 25 hours when daylight saving time
 * begins or ends, a month of 28 to 31 days)
 */
public record RateLimitDecision(RateLimit limit, boolean allowed, long remaining, long resetMicros,
		long retryAfterMicros, long delayMicros, long windowMicros) {

	public RateLimitDecision {
		Objects.requireNonNull(limit, "limit must not be null");
		if (windowMicros <= 0) {
			throw new IllegalArgumentException("windowMicros must be positive: " + windowMicros);
		}
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
	 * A decision in the limit's own {@link RateLimit#quotaWindowMicros() quota window}: of
	 * any limit but a calendar quota.
	 * @param limit the limit that decided
	 * @param allowed whether the request was admitted
	 * @param remaining quota units left after this request (before it, when rejected)
	 * @param resetMicros time until at least one more unit of quota becomes available
	 * @param retryAfterMicros when rejected, time until a request of the same cost would
	 * be admitted; 0 when allowed
	 * @param delayMicros how long an admitted request waits for its slot; 0 otherwise
	 */
	public RateLimitDecision(RateLimit limit, boolean allowed, long remaining, long resetMicros,
			long retryAfterMicros, long delayMicros) {
		this(limit, allowed, remaining, resetMicros, retryAfterMicros, delayMicros,
				Objects.requireNonNull(limit, "limit must not be null").quotaWindowMicros());
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
				this.resetMicros, 0, 0, this.windowMicros);
	}

	static RateLimitDecision allowed(RateLimit limit, long remaining, long resetMicros, long delayMicros) {
		return new RateLimitDecision(limit, true, remaining, resetMicros, 0, delayMicros);
	}

	static RateLimitDecision rejected(RateLimit limit, long remaining, long resetMicros, long retryAfterMicros) {
		return new RateLimitDecision(limit, false, remaining, resetMicros, retryAfterMicros, 0);
	}

}
