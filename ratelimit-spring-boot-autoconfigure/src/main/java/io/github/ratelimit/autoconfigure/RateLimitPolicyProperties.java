package io.github.ratelimit.autoconfigure;

import java.time.Duration;
import java.time.ZoneId;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.CalendarPeriod;
import io.github.ratelimit.FailMode;
import io.github.ratelimit.KeySource;

/**
 * Settings of a named limit, bound from {@code ratelimit.policies.<name>}. A policy applies
 * to the annotations and routes of its name and overrides their values; what it leaves unset
 * comes from the annotation or the defaults.
 *
 * @see RateLimitProperties#getPolicies()
 */
public class RateLimitPolicyProperties {

	/**
	 * Algorithm deciding the requests.
	 */
	private Algorithm algorithm;

	/**
	 * Bucket size, or requests per window; for a concurrency limit, the permits in flight per identity.
	 */
	private Long capacity;

	/**
	 * Tokens added per period for the bucket algorithms; 0 means the capacity.
	 */
	private Long refillTokens;

	/**
	 * Refill period or window length; for a concurrency limit, how long a permit never given back is held.
	 */
	private Duration period;

	/**
	 * Quota units one request consumes.
	 */
	private Long cost;

	/**
	 * Key sources tried in order; the first available for the request wins.
	 */
	private List<KeySource> key = new ArrayList<>();

	/**
	 * What this limit does when its store fails; unset means ratelimit.fail-mode.
	 */
	private FailMode failMode;

	/**
	 * Whether this limit runs in shadow mode, recording what it would reject; unset means ratelimit.shadow.
	 */
	private Boolean shadow;

	/**
	 * Calendar unit (day, week or month) of a quota turning over at local midnight; unset means windows of the period.
	 */
	private CalendarPeriod calendar;

	/**
	 * Time zone whose local midnight starts the windows of a calendar quota; unset means UTC.
	 */
	private ZoneId timeZone;

	/**
	 * What the quota counts when it is not requests, such as tokens; given as the quota unit in RateLimit-Policy.
	 */
	private String unit;

	/**
	 * Final HTTP statuses that count, as codes or classes such as 401 or 5xx; empty means every request counts.
	 */
	private List<String> countStatuses = new ArrayList<>();

	/**
	 * SpEL expression over the method arguments by name and #request whose value is the cost a call reserves when it starts; unset means the cost.
	 */
	private String estimate;

	/**
	 * SpEL expression over #result and the method arguments whose value is a call's actual cost, settled when it ends.
	 */
	private String actualCost;

	/**
	 * Name of the response header carrying a web handler's actual cost, settled when the response is final.
	 */
	private String actualCostHeader;

	/**
	 * Longest time a call waits for a permit instead of being rejected; unset means the annotation's maxWait.
	 */
	private Duration maxWait;

	/**
	 * Algorithm and parameters evaluated beside this limit in shadow mode, to compare them before switching.
	 */
	private final Parameters candidate = new Parameters();

	/**
	 * Capacity, refill-tokens, period and algorithm by plan name, for requests of that plan.
	 */
	private Map<String, Parameters> plans = new LinkedHashMap<>();

	public Algorithm getAlgorithm() {
		return this.algorithm;
	}

	public void setAlgorithm(Algorithm algorithm) {
		this.algorithm = algorithm;
	}

	public Long getCapacity() {
		return this.capacity;
	}

	public void setCapacity(Long capacity) {
		this.capacity = capacity;
	}

	public Long getRefillTokens() {
		return this.refillTokens;
	}

	public void setRefillTokens(Long refillTokens) {
		this.refillTokens = refillTokens;
	}

	public Duration getPeriod() {
		return this.period;
	}

	public void setPeriod(Duration period) {
		this.period = period;
	}

	public Long getCost() {
		return this.cost;
	}

	public void setCost(Long cost) {
		this.cost = cost;
	}

	public List<KeySource> getKey() {
		return this.key;
	}

	public void setKey(List<KeySource> key) {
		this.key = key;
	}

	public FailMode getFailMode() {
		return this.failMode;
	}

	public void setFailMode(FailMode failMode) {
		this.failMode = failMode;
	}

	public Boolean getShadow() {
		return this.shadow;
	}

	public void setShadow(Boolean shadow) {
		this.shadow = shadow;
	}

	public CalendarPeriod getCalendar() {
		return this.calendar;
	}

	public void setCalendar(CalendarPeriod calendar) {
		this.calendar = calendar;
	}

	public ZoneId getTimeZone() {
		return this.timeZone;
	}

	public void setTimeZone(ZoneId timeZone) {
		this.timeZone = timeZone;
	}

	public String getUnit() {
		return this.unit;
	}

	public void setUnit(String unit) {
		this.unit = unit;
	}

	public List<String> getCountStatuses() {
		return this.countStatuses;
	}

	public void setCountStatuses(List<String> countStatuses) {
		this.countStatuses = countStatuses;
	}

	public String getEstimate() {
		return this.estimate;
	}

	public void setEstimate(String estimate) {
		this.estimate = estimate;
	}

	public String getActualCost() {
		return this.actualCost;
	}

	public void setActualCost(String actualCost) {
		this.actualCost = actualCost;
	}

	public String getActualCostHeader() {
		return this.actualCostHeader;
	}

	public void setActualCostHeader(String actualCostHeader) {
		this.actualCostHeader = actualCostHeader;
	}

	public Duration getMaxWait() {
		return this.maxWait;
	}

	public void setMaxWait(Duration maxWait) {
		this.maxWait = maxWait;
	}

	public Parameters getCandidate() {
		return this.candidate;
	}

	public Map<String, Parameters> getPlans() {
		return this.plans;
	}

	public void setPlans(Map<String, Parameters> plans) {
		this.plans = plans;
	}

	/**
	 * Algorithm and parameters of a candidate or of a plan; unset values are the policy's.
	 */
	public static class Parameters {

		/**
		 * Algorithm deciding the requests; unset means the policy's.
		 */
		private Algorithm algorithm;

		/**
		 * Bucket size, or requests per window; unset means the policy's.
		 */
		private Long capacity;

		/**
		 * Tokens added per period for the bucket algorithms; unset means the policy's.
		 */
		private Long refillTokens;

		/**
		 * Refill period or window length; unset means the policy's.
		 */
		private Duration period;

		public Algorithm getAlgorithm() {
			return this.algorithm;
		}

		public void setAlgorithm(Algorithm algorithm) {
			this.algorithm = algorithm;
		}

		public Long getCapacity() {
			return this.capacity;
		}

		public void setCapacity(Long capacity) {
			this.capacity = capacity;
		}

		public Long getRefillTokens() {
			return this.refillTokens;
		}

		public void setRefillTokens(Long refillTokens) {
			this.refillTokens = refillTokens;
		}

		public Duration getPeriod() {
			return this.period;
		}

		public void setPeriod(Duration period) {
			this.period = period;
		}

	}

}
