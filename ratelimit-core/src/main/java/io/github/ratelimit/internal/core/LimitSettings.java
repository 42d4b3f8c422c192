package io.github.ratelimit.internal.core;

import java.time.Duration;
import java.time.ZoneId;
import java.util.List;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.CalendarPeriod;
import io.github.ratelimit.FailMode;
import io.github.ratelimit.KeySource;

/**
 * Partial settings of a limit, as written in one place (an annotation, a policy or a
 * route). {@code null} means "not set here"; {@link #overriddenBy} layers one place over
 * another, property by property.
 *
 * @param algorithm the algorithm
 * @param capacity the capacity
 * @param refillTokens tokens added per period (0 means capacity)
 * @param period the period
 * @param cost quota units one request consumes
 * @param key the key chain; empty means not set
 * @param keyExpression SpEL expression for the identity; empty means not set
 * @param failMode what the limit does when its store fails
 * @param shadow whether the limit only records what it would reject
 * @param maxWait longest time a call waits for a permit instead of being rejected
 * @param calendar the calendar unit a fixed window is aligned to; {@link CalendarPeriod#NONE}
 * (set explicitly) makes the limit no calendar quota
 * @param timeZone the time zone of a calendar quota
 * @param countStatuses the final HTTP statuses that count, as codes or classes
 * ({@code "401"}, {@code "4xx"}); empty means not set
 */
public record LimitSettings(Algorithm algorithm, Long capacity, Long refillTokens, Duration period, Long cost,
		List<KeySource> key, String keyExpression, FailMode failMode, Boolean shadow, Duration maxWait,
		CalendarPeriod calendar, ZoneId timeZone, List<String> countStatuses) {

	/** Settings that set nothing. */
	public static final LimitSettings EMPTY = new LimitSettings(null, null, null, null, null, null, null, null, null,
			null, null, null, null);

	public LimitSettings {
		key = (key != null) ? List.copyOf(key) : List.of();
		countStatuses = (countStatuses != null) ? List.copyOf(countStatuses) : List.of();
		keyExpression = (keyExpression != null && !keyExpression.isBlank()) ? keyExpression : null;
	}

	/**
	 * Settings that leave the counted statuses unset.
	 * @param algorithm the algorithm
	 * @param capacity the capacity
	 * @param refillTokens tokens added per period
	 * @param period the period
	 * @param cost the cost
	 * @param key the key chain
	 * @param keyExpression the key expression
	 * @param failMode the fail mode
	 * @param shadow whether the limit only records what it would reject
	 * @param maxWait longest time a call waits for a permit
	 * @param calendar the calendar unit
	 * @param timeZone the time zone of a calendar quota
	 */
	public LimitSettings(Algorithm algorithm, Long capacity, Long refillTokens, Duration period, Long cost,
			List<KeySource> key, String keyExpression, FailMode failMode, Boolean shadow, Duration maxWait,
			CalendarPeriod calendar, ZoneId timeZone) {
		this(algorithm, capacity, refillTokens, period, cost, key, keyExpression, failMode, shadow, maxWait, calendar,
				timeZone, null);
	}

	/**
	 * Settings that leave the calendar and the time zone unset.
	 * @param algorithm the algorithm
	 * @param capacity the capacity
	 * @param refillTokens tokens added per period
	 * @param period the period
	 * @param cost the cost
	 * @param key the key chain
	 * @param keyExpression the key expression
	 * @param failMode the fail mode
	 * @param shadow whether the limit only records what it would reject
	 * @param maxWait longest time a call waits for a permit
	 */
	public LimitSettings(Algorithm algorithm, Long capacity, Long refillTokens, Duration period, Long cost,
			List<KeySource> key, String keyExpression, FailMode failMode, Boolean shadow, Duration maxWait) {
		this(algorithm, capacity, refillTokens, period, cost, key, keyExpression, failMode, shadow, maxWait, null,
				null);
	}

	/**
	 * Settings that leave the longest wait unset.
	 * @param algorithm the algorithm
	 * @param capacity the capacity
	 * @param refillTokens tokens added per period
	 * @param period the period
	 * @param cost the cost
	 * @param key the key chain
	 * @param keyExpression the key expression
	 * @param failMode the fail mode
	 * @param shadow whether the limit only records what it would reject
	 */
	public LimitSettings(Algorithm algorithm, Long capacity, Long refillTokens, Duration period, Long cost,
			List<KeySource> key, String keyExpression, FailMode failMode, Boolean shadow) {
		this(algorithm, capacity, refillTokens, period, cost, key, keyExpression, failMode, shadow, null);
	}

	/**
	 * Settings that leave the fail mode unset.
	 * @param algorithm the algorithm
	 * @param capacity the capacity
	 * @param refillTokens tokens added per period
	 * @param period the period
	 * @param cost the cost
	 * @param key the key chain
	 * @param keyExpression the key expression
	 */
	public LimitSettings(Algorithm algorithm, Long capacity, Long refillTokens, Duration period, Long cost,
			List<KeySource> key, String keyExpression) {
		this(algorithm, capacity, refillTokens, period, cost, key, keyExpression, null, null);
	}

	/**
	 * Settings that leave shadow mode unset.
	 * @param algorithm the algorithm
	 * @param capacity the capacity
	 * @param refillTokens tokens added per period
	 * @param period the period
	 * @param cost the cost
	 * @param key the key chain
	 * @param keyExpression the key expression
	 * @param failMode the fail mode
	 */
	public LimitSettings(Algorithm algorithm, Long capacity, Long refillTokens, Duration period, Long cost,
			List<KeySource> key, String keyExpression, FailMode failMode) {
		this(algorithm, capacity, refillTokens, period, cost, key, keyExpression, failMode, null);
	}

	/**
	 * Layers {@code override} over these settings: every property it sets wins.
	 * @param override the settings that take precedence
	 * @return the merged settings
	 */
	public LimitSettings overriddenBy(LimitSettings override) {
		return new LimitSettings(pick(override.algorithm, this.algorithm), pick(override.capacity, this.capacity),
				pick(override.refillTokens, this.refillTokens), pick(override.period, this.period),
				pick(override.cost, this.cost), override.key.isEmpty() ? this.key : override.key,
				pick(override.keyExpression, this.keyExpression), pick(override.failMode, this.failMode),
				pick(override.shadow, this.shadow), pick(override.maxWait, this.maxWait),
				pick(override.calendar, this.calendar), pick(override.timeZone, this.timeZone),
				override.countStatuses.isEmpty() ? this.countStatuses : override.countStatuses);
	}

	private static <T> T pick(T preferred, T fallback) {
		return (preferred != null) ? preferred : fallback;
	}

}
