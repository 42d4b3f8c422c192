package io.github.ratelimit.internal.core;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArraySet;
import java.util.function.Function;
import java.util.regex.Pattern;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.CalendarPeriod;
import io.github.ratelimit.FailMode;
import io.github.ratelimit.KeySource;
import io.github.ratelimit.RateLimitConfigurationException;
import io.github.ratelimit.store.RateLimit;

/**
 * Turns the settings written at one place into an effective {@link LimitDefinition}:
 * layers the policy of the same name ({@code ratelimit.policies.<name>}) over them,
 * fills defaults, validates, and checks that every place using one name agrees on the
 * limit. Errors name the property or annotated method the bad value came from.
 */
public final class LimitResolver {

	/** Prefix of the policy properties, used in error messages. */
	public static final String POLICIES_PREFIX = "ratelimit.policies";

	/** Longest wait for a permit a limit may ask for. */
	public static final Duration MAX_WAIT = Duration.ofDays(1);

	private static final Pattern PLAIN_POLICY_NAME = Pattern.compile("[a-z0-9][a-z0-9-]*");

	private final Map<String, LimitSettings> policies;

	private final List<KeySource> defaultKey;

	private final FailMode defaultFailMode;

	private final boolean defaultShadow;

	/** Derives the candidate and the plans of a policy's limit. */
	private final LimitVariants variants;

	private final Map<String, Resolved> byName = new ConcurrentHashMap<>();

	/** Every place resolved, in order, with the routes it guards. */
	private final Map<Place, Claim> claims = Collections.synchronizedMap(new LinkedHashMap<>());

	/**
	 * Creates a resolver whose limits fail open and are enforced unless they say
	 * otherwise, with no candidates and no plans; {@link #builder()} sets the rest.
	 * @param policies the policies by name
	 * @param defaultKey the key chain of limits that name none
	 */
	public LimitResolver(Map<String, LimitSettings> policies, List<KeySource> defaultKey) {
		this(builder().policies(policies).defaultKey(defaultKey));
	}

	private LimitResolver(Builder builder) {
		this.policies = Map.copyOf(builder.policies);
		this.defaultKey = List.copyOf(builder.defaultKey);
		this.defaultFailMode = builder.defaultFailMode;
		this.defaultShadow = builder.defaultShadow;
		this.variants = new LimitVariants(builder.candidates, builder.plans);
	}

	/**
	 * Starts a resolver with no policies, the global key, limits that fail open and are
	 * enforced, no candidates and no plans.
	 * @return the builder
	 */
	public static Builder builder() {
		return new Builder();
	}

	/**
	 * Whether a policy of that name is configured.
	 * @param name the name
	 * @return whether it exists
	 */
	public boolean hasPolicy(String name) {
		return this.policies.containsKey(name);
	}

	/**
	 * The property of a policy, as it must be written to bind: a name that is not a plain
	 * lowercase name (a route such as {@code GET /orders/{id}}, or {@code Class.method})
	 * needs brackets, since Spring Boot reads dots as nesting and drops other characters.
	 * @param name the policy name
	 * @return {@code ratelimit.policies.<name>} or {@code ratelimit.policies[<name>]}
	 */
	public static String policyProperty(String name) {
		return PLAIN_POLICY_NAME.matcher(name).matches() ? POLICIES_PREFIX + "." + name
				: POLICIES_PREFIX + "[" + name + "]";
	}

	/**
	 * Resolves a limit.
	 * @param name the limit name
	 * @param inline the settings written where the limit is applied
	 * @param origin where the inline settings come from, for error messages (for example
	 * {@code @RateLimited on OrderController.order(String)})
	 * @return the effective definition
	 * @throws RateLimitConfigurationException when the result is invalid
	 */
	public LimitDefinition resolve(String name, LimitSettings inline, String origin) {
		return resolve(name, inline, origin, false, true);
	}

	/**
	 * Resolves a route limit: the route's own settings are more specific than the policy
	 * it names, so they win.
	 * @param name the limit name
	 * @param route the settings written on the route
	 * @param origin the route property, such as {@code ratelimit.routes[0]}
	 * @return the effective definition
	 * @throws RateLimitConfigurationException when the result is invalid
	 */
	public LimitDefinition resolveRoute(String name, LimitSettings route, String origin) {
		return resolve(name, route, origin, true, true);
	}

	/**
	 * Records that the limit resolved under a name for a place guards a route, so that
	 * {@link #resolvedLimits()} can tell operators where each limit applies.
	 * @param name the limit name
	 * @param origin the place, as passed to {@link #resolve}
	 * @param route the route, such as {@code GET /orders/{id}}
	 */
	public void guards(String name, String origin, String route) {
		Claim claim = this.claims.get(new Place(name, origin));
		if (claim != null) {
			claim.routes.add(route);
		}
	}

	/**
	 * Every place resolved so far (all of them once the application has started), with
	 * where each value came from and the routes it guards.
	 * @return the resolved limits, in the order they were first resolved
	 */
	public List<ResolvedLimit> resolvedLimits() {
		synchronized (this.claims) {
			List<ResolvedLimit> resolved = new ArrayList<>(this.claims.size());
			this.claims.forEach((place, claim) -> resolved.add(new ResolvedLimit(place.origin, claim.definition,
					claim.sources, List.copyOf(claim.routes))));
			return resolved;
		}
	}

	/**
	 * What the quota of a limit resolved for some place counts, for the headers that
	 * advertise it: read once per limit when its header text is built, not per request.
	 * @param name the limit name
	 * @return the limit's unit ({@link LimitDefinition#REQUESTS},
	 * {@link LimitDefinition#CONCURRENT_REQUESTS} or one of the application's), or
	 * {@code null} when no place has resolved a limit of that name
	 */
	public String unitOf(String name) {
		Resolved resolved = this.byName.get(name);
		return (resolved != null) ? resolved.unit : null;
	}

	/**
	 * The names of the configured policies.
	 * @return the policy names
	 */
	public Set<String> policyNames() {
		return this.policies.keySet();
	}

	/**
	 * A policy resolved on its own, as an operator sees a policy no place uses.
	 * @param name the policy name
	 * @return the policy, or {@code null} when it is not complete on its own (it has no
	 * capacity) or not configured
	 */
	public ResolvedLimit policy(String name) {
		if (!hasPolicy(name) || this.policies.get(name).capacity() == null) {
			return null;
		}
		String origin = policyProperty(name);
		LimitDefinition definition = resolve(name, LimitSettings.EMPTY, origin, false, false);
		return new ResolvedLimit(origin, definition, sources(name, LimitSettings.EMPTY, origin, false), List.of());
	}

	/**
	 * Validates a policy on its own, without claiming its name.
	 * @param name the policy name
	 * @throws RateLimitConfigurationException when the policy is invalid
	 */
	public void validatePolicy(String name) {
		resolve(name, LimitSettings.EMPTY, policyProperty(name), false, false);
	}

	private LimitDefinition resolve(String name, LimitSettings inline, String origin, boolean inlineWins,
			boolean claim) {
		LimitSettings policy = this.policies.get(name);
		LimitSettings merged = (policy == null) ? inline
				: (inlineWins ? policy.overriddenBy(inline) : inline.overriddenBy(policy));
		SettingOrigins origins = new SettingOrigins(name, policy, inline, inlineWins, origin);
		Algorithm algorithm = (merged.algorithm() != null) ? merged.algorithm() : Algorithm.TOKEN_BUCKET;
		if (merged.capacity() == null) {
			String reason = (policy == null && inline.capacity() == null)
					? "limit '" + name + "' has no capacity and no policy '" + name + "' is configured"
					: "limit '" + name + "' has no capacity";
			throw new RateLimitConfigurationException(origin, reason,
					"Set a positive capacity there, or configure " + policyProperty(name) + ".capacity");
		}
		long capacity = merged.capacity();
		if (capacity <= 0) {
			throw invalid(origins.of(LimitSettings::capacity, "capacity"),
					"capacity must be positive: " + capacity, "Set a capacity of at least 1");
		}
		long refill = (merged.refillTokens() != null) ? merged.refillTokens() : 0;
		if (refill < 0) {
			throw invalid(origins.of(LimitSettings::refillTokens, "refill-tokens"),
					"refill-tokens must not be negative: " + refill, "Use 0 (refill the capacity) or a positive number");
		}
		CalendarPeriod calendar = (merged.calendar() != null) ? merged.calendar() : CalendarPeriod.NONE;
		if (calendar != CalendarPeriod.NONE) {
			if (merged.algorithm() != null && merged.algorithm() != Algorithm.FIXED_WINDOW) {
				throw invalid(origins.of(LimitSettings::calendar, "calendar"),
						"a calendar quota is a fixed window: calendar " + spelled(calendar)
								+ " cannot be combined with algorithm " + spelled(merged.algorithm()) + " (set by "
								+ origins.of(LimitSettings::algorithm, "algorithm") + ")",
						"Remove the algorithm (a calendar implies fixed-window), or remove the calendar");
			}
			if (merged.period() != null) {
				throw invalid(origins.of(LimitSettings::period, "period"),
						"a calendar quota's window is the calendar " + spelled(calendar) + ", so it takes no period: "
								+ merged.period(),
						"Remove the period, or remove the calendar for windows of a fixed length");
			}
			algorithm = Algorithm.FIXED_WINDOW;
		}
		else if (merged.timeZone() != null) {
			throw invalid(origins.of(LimitSettings::timeZone, "time-zone"),
					"time-zone " + merged.timeZone() + " applies to calendar quotas only, and no calendar is set",
					"Set calendar to day, week or month, or remove the time-zone");
		}
		Duration period = (calendar != CalendarPeriod.NONE) ? RateLimit.calendarPeriod(calendar)
				: (merged.period() != null) ? merged.period() : AlgorithmSpec.of(algorithm).defaultPeriod();
		if (period.isNegative() || period.isZero() || period.compareTo(Duration.ofMillis(1)) < 0) {
			throw invalid(origins.of(LimitSettings::period, "period"),
					"period must be at least 1ms: " + period, "Use a positive duration such as 1s, 15m or PT1H");
		}
		long cost = (merged.cost() != null) ? merged.cost() : 1;
		if (cost <= 0 || cost > capacity) {
			throw invalid(origins.of(LimitSettings::cost, "cost"),
					"cost " + cost + " can never be admitted by capacity " + capacity,
					"Use a cost between 1 and the capacity, or raise the capacity");
		}
		RateLimit limit;
		try {
			FailMode failMode = (merged.failMode() != null) ? merged.failMode() : this.defaultFailMode;
			boolean shadow = (merged.shadow() != null) ? merged.shadow() : this.defaultShadow;
			limit = new RateLimit(name, algorithm, capacity, refill, period, failMode, shadow, calendar,
					merged.timeZone());
		}
		catch (IllegalArgumentException ex) {
			throw invalid(origins.of(LimitSettings::capacity, "capacity"), ex.getMessage(),
					"Choose a smaller capacity or a shorter period");
		}
		Duration maxWait = (merged.maxWait() != null) ? merged.maxWait() : Duration.ZERO;
		if (maxWait.isNegative() || maxWait.compareTo(MAX_WAIT) > 0) {
			throw invalid(origins.of(LimitSettings::maxWait, "max-wait"),
					"max-wait must be between 0 and " + MAX_WAIT + ": " + maxWait,
					"Use 0 (never wait) or a duration such as 2s; a longer backlog belongs in a queue");
		}
		List<KeySource> key = merged.key().isEmpty() ? this.defaultKey : merged.key();
		CountedOutcomes countStatuses = (merged.countStatuses() != null) ? merged.countStatuses() : CountedOutcomes.ALL;
		if (AlgorithmSpec.of(algorithm).heldInFlight() && !countStatuses.countsAll()) {
			throw invalid(origins.of(LimitSettings::countStatuses, "count-statuses"),
					"a concurrency limit gives back every call's permit when it completes, so no status counts: "
							+ countStatuses.values(),
					"Remove count-statuses, or use a rate limit to count calls by their answer");
		}
		String unit = merged.unit();
		if (unit != null) {
			String unitProperty = origins.of(LimitSettings::unit, "unit");
			if (!LimitDefinition.UNIT.matcher(unit).matches()) {
				throw invalid(unitProperty, "unit '" + unit + "' is not a quota unit token",
						"Use a lowercase name of at most 32 letters, digits and dashes, starting with a letter, "
								+ "such as tokens or content-bytes");
			}
			boolean inFlight = AlgorithmSpec.of(algorithm).heldInFlight();
			if (inFlight && !unit.equals(LimitDefinition.CONCURRENT_REQUESTS)) {
				throw invalid(unitProperty,
						"a concurrency limit counts calls in flight, so its unit is concurrent-requests: " + unit,
						"Remove the unit, or use a rate limit to count " + unit);
			}
			if (!inFlight && unit.equals(LimitDefinition.CONCURRENT_REQUESTS)) {
				throw invalid(unitProperty,
						"only a concurrency limit counts concurrent-requests, and this limit is a "
								+ spelled(algorithm),
						"Remove the unit, or set algorithm to concurrency");
			}
		}
		SettledCost settledCost = new SettledCost(merged.estimate(), merged.actualCost(), merged.actualCostHeader());
		if (AlgorithmSpec.of(algorithm).heldInFlight() && settledCost.settles()) {
			String property = (merged.estimate() != null) ? origins.of(LimitSettings::estimate, "estimate")
					: (merged.actualCost() != null) ? origins.of(LimitSettings::actualCost, "actual-cost")
							: origins.of(LimitSettings::actualCostHeader, "actual-cost-header");
			throw invalid(property,
					"a concurrency limit counts calls in flight, which have no cost to settle: " + settledCost,
					"Remove estimate, actual-cost and actual-cost-header, or use a rate limit to count costs");
		}
		LimitDefinition definition = LimitDefinition.builder(limit)
			.unit(unit)
			.cost(cost)
			.key(key)
			.keyExpression(merged.keyExpression())
			.candidate(this.variants.candidate(name, limit))
			.maxWait(maxWait)
			.plans(this.variants.plans(name, limit, cost))
			.countStatuses(countStatuses)
			.settledCost(settledCost)
			.build();
		if (!claim) {
			return definition;
		}
		Resolved previous = this.byName.putIfAbsent(name, new Resolved(limit, definition.unit(), origin));
		if (previous != null && !previous.limit.equals(limit)) {
			throw new RateLimitConfigurationException(origin,
					"limit '" + name + "' is also defined at " + previous.origin + " with different settings ("
							+ describe(previous.limit) + " there, " + describe(limit) + " here)",
					"Give the limits different names, or move the settings to " + policyProperty(name));
		}
		if (previous != null && !previous.unit.equals(definition.unit())) {
			// one bucket counts one thing: its headers could not say which
			throw new RateLimitConfigurationException(origin,
					"limit '" + name + "' is also defined at " + previous.origin + " counting " + previous.unit
							+ ", and here counting " + definition.unit(),
					"Give the limits different names, or set the unit once in " + policyProperty(name) + ".unit");
		}
		this.claims.putIfAbsent(new Place(name, origin),
				new Claim(definition, sources(name, inline, origin, inlineWins), new CopyOnWriteArraySet<>()));
		return definition;
	}

	/** Where each value of a limit came from, by property. */
	private Map<String, String> sources(String name, LimitSettings inline, String origin, boolean inlineWins) {
		SettingOrigins origins = new SettingOrigins(name, this.policies.get(name), inline, inlineWins, origin);
		Map<String, String> sources = new LinkedHashMap<>();
		sources.put("algorithm", origins.source(LimitSettings::algorithm, "algorithm"));
		sources.put("capacity", origins.source(LimitSettings::capacity, "capacity"));
		sources.put("refillTokens", origins.source(LimitSettings::refillTokens, "refill-tokens"));
		sources.put("period", origins.source(LimitSettings::period, "period"));
		sources.put("cost", origins.source(LimitSettings::cost, "cost"));
		sources.put("key", origins.source((settings) -> settings.key().isEmpty() ? null : settings.key(), "key"));
		sources.put("keyExpression", origins.source(LimitSettings::keyExpression, "key-expression"));
		sources.put("failMode", origins.source(LimitSettings::failMode, "fail-mode"));
		sources.put("shadow", origins.source(LimitSettings::shadow, "shadow"));
		sources.put("calendar", origins.source(LimitSettings::calendar, "calendar"));
		sources.put("timeZone", origins.source(LimitSettings::timeZone, "time-zone"));
		sources.put("unit", origins.source(LimitSettings::unit, "unit"));
		sources.put("estimate", origins.source(LimitSettings::estimate, "estimate"));
		sources.put("actualCost", origins.source(LimitSettings::actualCost, "actual-cost"));
		sources.put("actualCostHeader", origins.source(LimitSettings::actualCostHeader, "actual-cost-header"));
		return sources;
	}

	/** As properties spell an enum constant, such as {@code fixed-window}. */
	static String spelled(Enum<?> value) {
		return value.name().toLowerCase(Locale.ROOT).replace('_', '-');
	}

	static RateLimitConfigurationException invalid(String origin, String reason, String action) {
		return new RateLimitConfigurationException(origin, reason, action);
	}

	private static String describe(RateLimit limit) {
		return limit.algorithm() + " capacity=" + limit.capacity() + " refill-tokens=" + limit.refillTokens()
				+ " period=" + limit.period() + " fail-mode=" + limit.failMode() + " shadow=" + limit.shadow()
				+ (limit.isCalendar() ? " calendar=" + limit.calendar() + " time-zone=" + limit.timeZone() : "");
	}

	private record Resolved(RateLimit limit, String unit, String origin) {
	}

	private record Place(String name, String origin) {
	}

	private record Claim(LimitDefinition definition, Map<String, String> sources, Set<String> routes) {
	}

	/** Builds a {@link LimitResolver}. */
	public static final class Builder {

		private Map<String, LimitSettings> policies = Map.of();

		private List<KeySource> defaultKey = List.of(KeySource.GLOBAL);

		private FailMode defaultFailMode = FailMode.OPEN;

		private boolean defaultShadow;

		private Map<String, LimitSettings> candidates = Map.of();

		private Map<String, Map<String, LimitSettings>> plans = Map.of();

		private Builder() {
		}

		/**
		 * Sets the policies.
		 * @param policies the policies by name
		 * @return this builder
		 */
		public Builder policies(Map<String, LimitSettings> policies) {
			this.policies = Map.copyOf(policies);
			return this;
		}

		/**
		 * Sets the key chain of limits that name none.
		 * @param defaultKey the key sources in order
		 * @return this builder
		 */
		public Builder defaultKey(List<KeySource> defaultKey) {
			this.defaultKey = List.copyOf(defaultKey);
			return this;
		}

		/**
		 * Sets the fail mode of limits that set none.
		 * @param defaultFailMode the fail mode
		 * @return this builder
		 */
		public Builder defaultFailMode(FailMode defaultFailMode) {
			this.defaultFailMode = defaultFailMode;
			return this;
		}

		/**
		 * Sets whether limits that set nothing about it run in shadow mode.
		 * @param defaultShadow whether they only record what they would reject
		 * @return this builder
		 */
		public Builder defaultShadow(boolean defaultShadow) {
			this.defaultShadow = defaultShadow;
			return this;
		}

		/**
		 * Sets the candidates.
		 * @param candidates by policy name, the settings a candidate changes (algorithm,
		 * capacity, refill tokens, period); the rest is the policy's
		 * @return this builder
		 */
		public Builder candidates(Map<String, LimitSettings> candidates) {
			this.candidates = Map.copyOf(candidates);
			return this;
		}

		/**
		 * Sets the plans.
		 * @param plans by policy name, then by plan name, the settings a plan changes
		 * (capacity, refill tokens, period; an algorithm only if it is the policy's)
		 * @return this builder
		 */
		public Builder plans(Map<String, Map<String, LimitSettings>> plans) {
			this.plans = Map.copyOf(plans);
			return this;
		}

		/**
		 * Builds the resolver.
		 * @return the resolver
		 */
		public LimitResolver build() {
			return new LimitResolver(this);
		}

	}

}
