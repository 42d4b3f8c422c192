package io.github.ratelimit.internal.core;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.CalendarPeriod;
import io.github.ratelimit.FailMode;
import io.github.ratelimit.store.RateLimit;

/**
 * Derives the variants of a policy's enforced limit: the candidate evaluated beside it in
 * shadow mode, and the limits of its plans. Errors name the property under
 * {@code ratelimit.policies.<name>} the bad value came from.
 */
final class LimitVariants {

	private final Map<String, LimitSettings> candidates;

	private final Map<String, Map<String, LimitSettings>> plans;

	/**
	 * Creates the variants.
	 * @param candidates by policy name, the settings a candidate changes
	 * @param plans by policy name, then by plan name, the settings a plan changes
	 */
	LimitVariants(Map<String, LimitSettings> candidates, Map<String, Map<String, LimitSettings>> plans) {
		this.candidates = Map.copyOf(candidates);
		this.plans = Map.copyOf(plans);
	}

	/** The candidate of a policy: its own settings over the enforced limit's, in shadow mode. */
	RateLimit candidate(String name, RateLimit enforced) {
		LimitSettings settings = this.candidates.get(name);
		if (settings == null) {
			return null;
		}
		String origin = LimitResolver.POLICIES_PREFIX + "." + name + ".candidate";
		long capacity = (settings.capacity() != null) ? settings.capacity() : enforced.capacity();
		long refill = (settings.refillTokens() != null) ? settings.refillTokens()
				: (settings.capacity() != null ? 0 : enforced.refillTokens());
		Duration period = (settings.period() != null) ? settings.period() : enforced.period();
		Algorithm algorithm = (settings.algorithm() != null) ? settings.algorithm() : enforced.algorithm();
		if (AlgorithmSpec.of(algorithm).heldInFlight() != AlgorithmSpec.of(enforced.algorithm()).heldInFlight()) {
			throw LimitResolver.invalid(origin + ".algorithm",
					"a candidate counts what its policy counts: calls in flight for a concurrency limit, calls made"
							+ " otherwise, so " + LimitResolver.spelled(algorithm) + " cannot try out " + LimitResolver.spelled(enforced.algorithm()),
					"Give the candidate an algorithm of the same kind as the policy's");
		}
		// a candidate of a calendar quota counts per calendar window too, unless it changes the windows
		boolean calendar = enforced.isCalendar() && settings.period() == null && algorithm == Algorithm.FIXED_WINDOW;
		try {
			return new RateLimit(name + RateLimit.CANDIDATE_SUFFIX, algorithm, capacity, refill, period, FailMode.OPEN,
					true, calendar ? enforced.calendar() : CalendarPeriod.NONE,
					calendar ? enforced.timeZone() : RateLimit.DEFAULT_TIME_ZONE);
		}
		catch (IllegalArgumentException ex) {
			throw LimitResolver.invalid(origin, ex.getMessage(), "Give the candidate a positive capacity and a period of at least 1ms");
		}
	}

	/**
	 * The plans of a policy, each the enforced limit with the plan's settings over it. A
	 * plan setting a capacity but no refill tokens refills its own capacity per period, as
	 * a policy does. The algorithm is the policy's, and the window algorithms keep its
	 * period: every plan draws from the same bucket per identity.
	 */
	Map<String, RateLimit> plans(String name, RateLimit enforced, long cost) {
		Map<String, LimitSettings> configured = this.plans.getOrDefault(name, Map.of());
		Map<String, RateLimit> plans = new LinkedHashMap<>();
		configured.forEach((plan, settings) -> {
			String origin = LimitResolver.policyProperty(name) + ".plans." + plan;
			if (plans.containsKey(plan.toLowerCase(Locale.ROOT))) {
				throw LimitResolver.invalid(origin, "plan '" + plan + "' is defined twice (plan names ignore case)",
						"Keep one of the plans that differ only in case");
			}
			if (settings.algorithm() != null && settings.algorithm() != enforced.algorithm()) {
				throw LimitResolver.invalid(origin + ".algorithm",
						"a plan cannot change the algorithm (" + enforced.algorithm() + " to " + settings.algorithm()
								+ "): every plan draws from the same bucket per identity",
						"Remove it; a plan may change capacity, refill-tokens and period");
			}
			long capacity = (settings.capacity() != null) ? settings.capacity() : enforced.capacity();
			long refill = (settings.refillTokens() != null) ? settings.refillTokens()
					: (settings.capacity() != null ? 0 : enforced.refillTokens());
			Duration period = (settings.period() != null) ? settings.period() : enforced.period();
			if (enforced.isCalendar() && settings.period() != null) {
				throw LimitResolver.invalid(origin + ".period",
						"a plan cannot change the window of a calendar quota, the calendar " + LimitResolver.spelled(enforced.calendar())
								+ ": every plan draws from the same bucket per identity",
						"Remove it and change the capacity instead");
			}
			if (!AlgorithmSpec.of(enforced.algorithm()).planMayChangePeriod() && !period.equals(enforced.period())) {
				throw LimitResolver.invalid(origin + ".period",
						"a plan of a " + enforced.algorithm() + " policy cannot change the period "
								+ enforced.period() + ": its counters belong to windows of that length",
						"Remove it and change the capacity instead, or use " + algorithmsWhosePlansMayChangeThePeriod());
			}
			if (capacity <= 0) {
				throw LimitResolver.invalid(origin + ".capacity", "capacity must be positive: " + capacity,
						"Set a capacity of at least 1");
			}
			if (cost > capacity) {
				throw LimitResolver.invalid(origin + ".capacity", "cost " + cost + " can never be admitted by capacity " + capacity,
						"Give the plan a capacity of at least the cost");
			}
			if (refill < 0) {
				throw LimitResolver.invalid(origin + ".refill-tokens", "refill-tokens must not be negative: " + refill,
						"Use 0 (refill the capacity) or a positive number");
			}
			try {
				plans.put(plan.toLowerCase(Locale.ROOT), new RateLimit(name, enforced.algorithm(), capacity, refill,
						period, enforced.failMode(), enforced.shadow(), enforced.calendar(), enforced.timeZone()));
			}
			catch (IllegalArgumentException ex) {
				throw LimitResolver.invalid(origin, ex.getMessage(),
						"Give the plan a positive capacity and a period of at least 1ms");
			}
		});
		return plans;
	}

	/** As properties spell them, such as {@code token-bucket or sliding-window-log}. */
	private static String algorithmsWhosePlansMayChangeThePeriod() {
		List<String> names = AlgorithmSpec.all()
			.stream()
			.filter(AlgorithmSpec::planMayChangePeriod)
			.map((spec) -> spec.algorithm().name().toLowerCase(Locale.ROOT).replace('_', '-'))
			.toList();
		return String.join(", ", names.subList(0, names.size() - 1)) + " or " + names.get(names.size() - 1);
	}

}
