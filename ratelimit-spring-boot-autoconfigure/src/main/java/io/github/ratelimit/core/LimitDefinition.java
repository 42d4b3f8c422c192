package io.github.ratelimit.core;

import java.time.Duration;
import java.util.List;
import java.util.Objects;

import io.github.ratelimit.KeySource;

/**
 * A fully resolved limit as applied at one place: the limit itself, the cost a request
 * there pays and how its identity is found.
 *
 * @param limit the limit (its name identifies the buckets)
 * @param cost quota units a request consumes
 * @param key the key chain, never empty
 * @param keyExpression SpEL expression for the identity, or {@code null}
 * @param candidate a limit evaluated beside this one in shadow mode to compare them, or
 * {@code null}
 * @param maxWait longest time a call waits for a permit instead of being rejected; zero
 * means no waiting
 */
public record LimitDefinition(RateLimit limit, long cost, List<KeySource> key, String keyExpression,
		RateLimit candidate, Duration maxWait) {

	public LimitDefinition {
		Objects.requireNonNull(limit, "limit must not be null");
		Objects.requireNonNull(maxWait, "maxWait must not be null");
		if (maxWait.isNegative()) {
			throw new IllegalArgumentException("maxWait must not be negative: " + maxWait);
		}
		key = List.copyOf(key);
		if (key.isEmpty()) {
			throw new IllegalArgumentException("key must not be empty");
		}
		if (cost <= 0 || cost > limit.capacity()) {
			throw new IllegalArgumentException("cost must be between 1 and the capacity " + limit.capacity() + ": " + cost);
		}
	}

	/**
	 * A definition that does not wait.
	 * @param limit the limit
	 * @param cost the cost
	 * @param key the key chain
	 * @param keyExpression the key expression, or {@code null}
	 * @param candidate the candidate, or {@code null}
	 */
	public LimitDefinition(RateLimit limit, long cost, List<KeySource> key, String keyExpression,
			RateLimit candidate) {
		this(limit, cost, key, keyExpression, candidate, Duration.ZERO);
	}

	/**
	 * A definition without a candidate.
	 * @param limit the limit
	 * @param cost the cost
	 * @param key the key chain
	 * @param keyExpression the key expression, or {@code null}
	 */
	public LimitDefinition(RateLimit limit, long cost, List<KeySource> key, String keyExpression) {
		this(limit, cost, key, keyExpression, null);
	}

	/**
	 * The acquisitions of one request: this limit, and its candidate if it has one.
	 * @param identity the identity of the request
	 * @return one or two acquisitions
	 */
	public List<Acquisition> acquisitions(String identity) {
		Acquisition enforced = new Acquisition(this.limit, identity, this.cost);
		if (this.candidate == null) {
			return List.of(enforced);
		}
		return List.of(enforced,
				new Acquisition(this.candidate, identity, Math.min(this.cost, this.candidate.capacity())));
	}

	/**
	 * Whether finding the identity needs the authenticated principal.
	 * @return whether {@link KeySource#PRINCIPAL} is in the key chain
	 */
	public boolean needsPrincipal() {
		return this.keyExpression != null || this.key.contains(KeySource.PRINCIPAL);
	}

}
