package io.github.ratelimit.test;

import java.time.Duration;

/**
 * What one limit decided for one identity, as {@link RateLimitDecisions} recorded it.
 *
 * @param limit the limit's name: a policy name, or the route template of an unnamed limit
 * ({@code GET /orders/{id}})
 * @param identity the identity owning the bucket, such as {@code user:alice},
 * {@code ip:127.0.0.1}, {@code tenant:acme} or {@code global}
 * @param cost the quota units asked for
 * @param allowed whether the limit admitted the request; a request several limits apply
 * to goes ahead only when all of them admit it
 * @param remaining quota left after the request (before it, when rejected)
 * @param retryAfter when rejected, how long until a request of the same cost would be
 * admitted; zero when allowed
 * @param shadow whether the limit only records what it would reject (shadow mode)
 * @param store the store that decided: {@code memory}, {@code redis} or {@code fallback}
 */
public record RecordedDecision(String limit, String identity, long cost, boolean allowed, long remaining,
		Duration retryAfter, boolean shadow, String store) {

	/**
	 * Whether the limit turned the request away (or, in shadow mode, would have).
	 * @return whether the decision is a rejection
	 */
	public boolean rejected() {
		return !this.allowed;
	}

	/**
	 * Whether this decision is about the given bucket.
	 * @param limit the limit name
	 * @param identity the identity
	 * @return whether both match
	 */
	public boolean isFor(String limit, String identity) {
		return this.limit.equals(limit) && this.identity.equals(identity);
	}

	@Override
	public String toString() {
		return "'" + this.limit + "' " + (this.allowed ? "allowed " : "rejected ") + this.identity + " (cost "
				+ this.cost + ", remaining " + this.remaining + (this.shadow ? ", shadow" : "") + ")";
	}

}
