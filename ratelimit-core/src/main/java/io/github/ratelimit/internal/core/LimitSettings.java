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
 * @param countStatuses the outcomes that count, already validated where they were written
 * (final HTTP statuses, parsed by the web layer); {@code null} means not set
 * @param unit what the limit's quota counts, such as {@code tokens}; empty means not set
 * @param estimate SpEL expression for the cost a call reserves, already parsed where it
 * was written; {@code null} means not set
 * @param actualCost SpEL expression for a call's actual cost over its result, already
 * parsed where it was written; {@code null} means not set
 * @param actualCostHeader name of the response header carrying a call's actual cost;
 * {@code null} means not set
 */
public record LimitSettings(Algorithm algorithm, Long capacity, Long refillTokens, Duration period, Long cost,
		List<KeySource> key, String keyExpression, FailMode failMode, Boolean shadow, Duration maxWait,
		CalendarPeriod calendar, ZoneId timeZone, CountedOutcomes countStatuses, String unit, String estimate,
		String actualCost, String actualCostHeader) {

	/** Settings that set nothing. */
	public static final LimitSettings EMPTY = builder().build();

	public LimitSettings {
		key = (key != null) ? List.copyOf(key) : List.of();
		keyExpression = unlessBlank(keyExpression);
		unit = (unit != null && !unit.isEmpty()) ? unit : null;
		estimate = unlessBlank(estimate);
		actualCost = unlessBlank(actualCost);
		actualCostHeader = unlessBlank(actualCostHeader);
	}

	private static String unlessBlank(String text) {
		return (text != null && !text.isBlank()) ? text.trim() : null;
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
				pick(override.countStatuses, this.countStatuses), pick(override.unit, this.unit),
				pick(override.estimate, this.estimate), pick(override.actualCost, this.actualCost),
				pick(override.actualCostHeader, this.actualCostHeader));
	}

	private static <T> T pick(T preferred, T fallback) {
		return (preferred != null) ? preferred : fallback;
	}

	/**
	 * Starts settings that set nothing; each builder method sets one property.
	 * @return the builder
	 */
	public static Builder builder() {
		return new Builder();
	}

	/** Builds {@link LimitSettings}, leaving every property not set unset. */
	public static final class Builder {

		private Algorithm algorithm;

		private Long capacity;

		private Long refillTokens;

		private Duration period;

		private Long cost;

		private List<KeySource> key;

		private String keyExpression;

		private FailMode failMode;

		private Boolean shadow;

		private Duration maxWait;

		private CalendarPeriod calendar;

		private ZoneId timeZone;

		private CountedOutcomes countStatuses;

		private String unit;

		private String estimate;

		private String actualCost;

		private String actualCostHeader;

		private Builder() {
		}

		/**
		 * Sets the algorithm.
		 * @param algorithm the algorithm
		 * @return this builder
		 */
		public Builder algorithm(Algorithm algorithm) {
			this.algorithm = algorithm;
			return this;
		}

		/**
		 * Sets the capacity.
		 * @param capacity the capacity
		 * @return this builder
		 */
		public Builder capacity(Long capacity) {
			this.capacity = capacity;
			return this;
		}

		/**
		 * Sets the tokens added per period.
		 * @param refillTokens the tokens (0 means capacity)
		 * @return this builder
		 */
		public Builder refillTokens(Long refillTokens) {
			this.refillTokens = refillTokens;
			return this;
		}

		/**
		 * Sets the period.
		 * @param period the period
		 * @return this builder
		 */
		public Builder period(Duration period) {
			this.period = period;
			return this;
		}

		/**
		 * Sets the quota units one request consumes.
		 * @param cost the cost
		 * @return this builder
		 */
		public Builder cost(Long cost) {
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
		 * @param keyExpression the expression
		 * @return this builder
		 */
		public Builder keyExpression(String keyExpression) {
			this.keyExpression = keyExpression;
			return this;
		}

		/**
		 * Sets what the limit does when its store fails.
		 * @param failMode the fail mode
		 * @return this builder
		 */
		public Builder failMode(FailMode failMode) {
			this.failMode = failMode;
			return this;
		}

		/**
		 * Sets whether the limit only records what it would reject.
		 * @param shadow whether it runs in shadow mode
		 * @return this builder
		 */
		public Builder shadow(Boolean shadow) {
			this.shadow = shadow;
			return this;
		}

		/**
		 * Sets the longest time a call waits for a permit.
		 * @param maxWait the longest wait
		 * @return this builder
		 */
		public Builder maxWait(Duration maxWait) {
			this.maxWait = maxWait;
			return this;
		}

		/**
		 * Sets the calendar unit a fixed window is aligned to.
		 * @param calendar the calendar unit
		 * @return this builder
		 */
		public Builder calendar(CalendarPeriod calendar) {
			this.calendar = calendar;
			return this;
		}

		/**
		 * Sets the time zone of a calendar quota.
		 * @param timeZone the time zone
		 * @return this builder
		 */
		public Builder timeZone(ZoneId timeZone) {
			this.timeZone = timeZone;
			return this;
		}

		/**
		 * Sets the outcomes that count.
		 * @param countStatuses the outcomes, or {@code null} to leave them unset
		 * @return this builder
		 */
		public Builder countStatuses(CountedOutcomes countStatuses) {
			this.countStatuses = countStatuses;
			return this;
		}

		/**
		 * Sets what the limit's quota counts.
		 * @param unit the quota unit, such as {@code tokens}, or {@code null} or empty to
		 * leave it unset
		 * @return this builder
		 */
		public Builder unit(String unit) {
			this.unit = unit;
			return this;
		}

		/**
		 * Sets the expression for the cost a call reserves.
		 * @param estimate the expression, or {@code null} to leave it unset
		 * @return this builder
		 */
		public Builder estimate(String estimate) {
			this.estimate = estimate;
			return this;
		}

		/**
		 * Sets the expression for a call's actual cost.
		 * @param actualCost the expression, or {@code null} to leave it unset
		 * @return this builder
		 */
		public Builder actualCost(String actualCost) {
			this.actualCost = actualCost;
			return this;
		}

		/**
		 * Sets the response header carrying a call's actual cost.
		 * @param actualCostHeader the header name, or {@code null} to leave it unset
		 * @return this builder
		 */
		public Builder actualCostHeader(String actualCostHeader) {
			this.actualCostHeader = actualCostHeader;
			return this;
		}

		/**
		 * Builds the settings.
		 * @return the settings
		 */
		public LimitSettings build() {
			return new LimitSettings(this.algorithm, this.capacity, this.refillTokens, this.period, this.cost,
					this.key, this.keyExpression, this.failMode, this.shadow, this.maxWait, this.calendar,
					this.timeZone, this.countStatuses, this.unit, this.estimate, this.actualCost,
					this.actualCostHeader);
		}

	}

}
