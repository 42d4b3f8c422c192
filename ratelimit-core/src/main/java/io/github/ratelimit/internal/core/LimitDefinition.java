package io.github.ratelimit.internal.core;

import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.regex.Pattern;

import io.github.ratelimit.KeySource;
import io.github.ratelimit.store.Acquisition;
import io.github.ratelimit.store.RateLimit;

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
 * @param plans by lowercase plan name, the limit that applies instead of {@code limit} to
 * requests of that plan: the same name (so the same buckets), algorithm, calendar and
 * time zone, other parameters
 * @param countStatuses the outcomes (final HTTP statuses) that count against the limit; a
 * request with another outcome is given back what it consumed ({@link CountedOutcomes#ALL}:
 * every request counts; {@link CountedOutcomes#NONE} for a concurrency limit, whose permits
 * are given back whatever the outcome)
 * @param unit what the limit's quota counts, as the quota unit of
 * draft-ietf-httpapi-ratelimit-headers: {@value #REQUESTS} (the default),
 * {@value #CONCURRENT_REQUESTS} for a concurrency limit (always), or a unit of the
 * application's such as {@code tokens}; {@code null} means the default of the algorithm
 * @param settledCost how a call's reservation and actual cost are found, for a limit that
 * settles costs after the call; {@link SettledCost#NONE} for one whose cost is {@code cost}
 */
public record LimitDefinition(RateLimit limit, long cost, List<KeySource> key, String keyExpression,
		RateLimit candidate, Duration maxWait, Map<String, RateLimit> plans, CountedOutcomes countStatuses,
		String unit, SettledCost settledCost) {

	/** The quota unit of rate limits that name none: each request counts its cost. */
	public static final String REQUESTS = "requests";

	/** The quota unit of a concurrency limit: calls in flight. */
	public static final String CONCURRENT_REQUESTS = "concurrent-requests";

	/**
	 * What a quota unit may be: a lowercase token, as the units the draft registers
	 * ({@code requests}, {@code content-bytes}), short enough for a header.
	 */
	public static final Pattern UNIT = Pattern.compile("[a-z][a-z0-9-]{0,31}");

	public LimitDefinition {
		Objects.requireNonNull(limit, "limit must not be null");
		unit = checkedUnit(limit, unit);
		countStatuses = (countStatuses != null) ? countStatuses : CountedOutcomes.ALL;
		if (AlgorithmSpec.of(limit.algorithm()).heldInFlight()) {
			if (!countStatuses.countsAll() && countStatuses != CountedOutcomes.NONE) {
				throw new IllegalArgumentException(
						"a concurrency limit counts no outcome: " + countStatuses + " for limit '" + limit.name() + "'");
			}
			// permits held while the call runs are given back whatever its outcome
			countStatuses = CountedOutcomes.NONE;
		}
		settledCost = (settledCost != null) ? settledCost : SettledCost.NONE;
		if (settledCost.settles() && AlgorithmSpec.of(limit.algorithm()).heldInFlight()) {
			throw new IllegalArgumentException(
					"a concurrency limit has no cost to settle: " + settledCost + " for limit '" + limit.name() + "'");
		}
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
		plans = (plans != null) ? Map.copyOf(plans) : Map.of();
		plans.forEach((plan, planLimit) -> {
			if (!plan.equals(plan.toLowerCase(Locale.ROOT))) {
				throw new IllegalArgumentException("plan names must be lowercase: " + plan);
			}
			if (!planLimit.name().equals(limit.name()) || planLimit.algorithm() != limit.algorithm()
					|| planLimit.calendar() != limit.calendar() || !planLimit.timeZone().equals(limit.timeZone())) {
				throw new IllegalArgumentException("plan '" + plan
						+ "' must keep the name, algorithm, calendar and time zone of limit '" + limit.name() + "': "
						+ planLimit);
			}
			if (cost > planLimit.capacity()) {
				throw new IllegalArgumentException(
						"cost " + cost + " exceeds the capacity " + planLimit.capacity() + " of plan '" + plan + "'");
			}
		});
	}

	/**
	 * The quota unit of a limit, checked against its algorithm.
	 * @param limit the limit
	 * @param unit the unit asked for, or {@code null} for the algorithm's default
	 * @return the unit
	 * @throws IllegalArgumentException when the unit is not a token or does not fit the
	 * algorithm
	 */
	private static String checkedUnit(RateLimit limit, String unit) {
		boolean inFlight = AlgorithmSpec.of(limit.algorithm()).heldInFlight();
		if (unit == null) {
			return inFlight ? CONCURRENT_REQUESTS : REQUESTS;
		}
		if (!UNIT.matcher(unit).matches()) {
			throw new IllegalArgumentException("unit must be a lowercase token of at most 32 characters ("
					+ UNIT.pattern() + "): '" + unit + "' for limit '" + limit.name() + "'");
		}
		if (inFlight != unit.equals(CONCURRENT_REQUESTS)) {
			throw new IllegalArgumentException(inFlight
					? "a concurrency limit counts concurrent-requests: unit '" + unit + "' for limit '" + limit.name() + "'"
					: "only a concurrency limit counts concurrent-requests: limit '" + limit.name() + "' is a "
							+ limit.algorithm());
		}
		return unit;
	}

	/**
	 * Starts a definition of a limit: a cost of 1, the global key, no key expression, no
	 * candidate, no waiting, no plans, every request counted, in the algorithm's unit.
	 * @param limit the limit
	 * @return the builder
	 */
	public static Builder builder(RateLimit limit) {
		return new Builder(limit);
	}

	/**
	 * The acquisitions of one request: this limit, and its candidate if it has one.
	 * @param identity the identity of the request
	 * @return one or two acquisitions
	 */
	public List<Acquisition> acquisitions(String identity) {
		return acquisitions(identity, null);
	}

	/**
	 * The acquisitions of one request of a plan: the plan's limit draws from the same
	 * bucket as the policy's own, so a changed plan keeps the bucket's state.
	 * @param identity the identity of the request
	 * @param plan the plan of the request, or {@code null}
	 * @return one or two acquisitions
	 */
	public List<Acquisition> acquisitions(String identity, String plan) {
		Acquisition enforced = new Acquisition(limitFor(plan), identity, this.cost);
		if (this.candidate == null) {
			return List.of(enforced);
		}
		return List.of(enforced,
				new Acquisition(this.candidate, identity, Math.min(this.cost, this.candidate.capacity())));
	}

	/**
	 * The acquisitions of one call that reserves an estimated cost: the estimate, brought
	 * within what a decision can take (at least 1, at most the capacity of the limit that
	 * applies), instead of {@link #cost()}.
	 * @param identity the identity of the call
	 * @param plan the plan of the call, or {@code null}
	 * @param estimate the estimated cost, 0 or more
	 * @return one or two acquisitions
	 */
	public List<Acquisition> acquisitions(String identity, String plan, long estimate) {
		RateLimit enforced = limitFor(plan);
		long reserved = Math.max(1, Math.min(estimate, enforced.capacity()));
		Acquisition acquisition = new Acquisition(enforced, identity, reserved);
		if (this.candidate == null) {
			return List.of(acquisition);
		}
		return List.of(acquisition,
				new Acquisition(this.candidate, identity, Math.min(reserved, this.candidate.capacity())));
	}

	/**
	 * Whether calls under this limit settle their actual cost when they end.
	 * @return whether it sets an estimate, an actual cost or an actual cost header
	 */
	public boolean settles() {
		return this.settledCost.settles();
	}

	/**
	 * The limit for requests of a plan.
	 * @param plan the plan name (compared ignoring case), or {@code null}
	 * @return the plan's limit, or {@link #limit()} when there is no plan or the policy
	 * does not define it
	 */
	public RateLimit limitFor(String plan) {
		if (plan == null || this.plans.isEmpty()) {
			return this.limit;
		}
		return this.plans.getOrDefault(plan.toLowerCase(Locale.ROOT), this.limit);
	}

	/**
	 * Whether finding the identity needs the authenticated principal.
	 * @return whether {@link KeySource#PRINCIPAL} is in the key chain, or the limit has
	 * plans (found from the principal)
	 */
	public boolean needsPrincipal() {
		return this.keyExpression != null || this.key.contains(KeySource.PRINCIPAL) || !this.plans.isEmpty();
	}

	/** Builds a {@link LimitDefinition}. */
	public static final class Builder {

		private final RateLimit limit;

		private long cost = 1;

		private List<KeySource> key = List.of(KeySource.GLOBAL);

		private String keyExpression;

		private RateLimit candidate;

		private Duration maxWait = Duration.ZERO;

		private Map<String, RateLimit> plans = Map.of();

		private CountedOutcomes countStatuses = CountedOutcomes.ALL;

		private String unit;

		private SettledCost settledCost = SettledCost.NONE;

		private Builder(RateLimit limit) {
			this.limit = limit;
		}

		/**
		 * Sets the quota units a request consumes.
		 * @param cost the cost
		 * @return this builder
		 */
		public Builder cost(long cost) {
			this.cost = cost;
			return this;
		}

		/**
		 * Sets the key chain.
		 * @param key the key sources in order
		 * @return this builder
		 */
		public Builder key(List<KeySource> key) {
			this.key = key;
			return this;
		}

		/**
		 * Sets the SpEL expression for the identity.
		 * @param keyExpression the expression, or {@code null}
		 * @return this builder
		 */
		public Builder keyExpression(String keyExpression) {
			this.keyExpression = keyExpression;
			return this;
		}

		/**
		 * Sets the limit evaluated beside this one in shadow mode.
		 * @param candidate the candidate, or {@code null}
		 * @return this builder
		 */
		public Builder candidate(RateLimit candidate) {
			this.candidate = candidate;
			return this;
		}

		/**
		 * Sets the longest time a call waits for a permit.
		 * @param maxWait the longest wait; zero means no waiting
		 * @return this builder
		 */
		public Builder maxWait(Duration maxWait) {
			this.maxWait = maxWait;
			return this;
		}

		/**
		 * Sets the limits of plans.
		 * @param plans by lowercase plan name, the limit of that plan
		 * @return this builder
		 */
		public Builder plans(Map<String, RateLimit> plans) {
			this.plans = plans;
			return this;
		}

		/**
		 * Sets the outcomes that count against the limit.
		 * @param countStatuses the outcomes
		 * @return this builder
		 */
		public Builder countStatuses(CountedOutcomes countStatuses) {
			this.countStatuses = countStatuses;
			return this;
		}

		/**
		 * Sets what the limit's quota counts.
		 * @param unit the quota unit, or {@code null} for the algorithm's default
		 * @return this builder
		 */
		public Builder unit(String unit) {
			this.unit = unit;
			return this;
		}

		/**
		 * Sets how a call's reservation and actual cost are found.
		 * @param settledCost the expressions and header, {@link SettledCost#NONE} when the
		 * limit does not settle
		 * @return this builder
		 */
		public Builder settledCost(SettledCost settledCost) {
			this.settledCost = settledCost;
			return this;
		}

		/**
		 * Builds the definition.
		 * @return the definition
		 * @throws IllegalArgumentException when it is invalid
		 */
		public LimitDefinition build() {
			return new LimitDefinition(this.limit, this.cost, this.key, this.keyExpression, this.candidate,
					this.maxWait, this.plans, this.countStatuses, this.unit, this.settledCost);
		}

	}

}
