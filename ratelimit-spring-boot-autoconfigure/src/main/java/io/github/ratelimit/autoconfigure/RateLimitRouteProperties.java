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
 * A route limit, bound from {@code ratelimit.routes[i]}: a path pattern, optional methods,
 * and a policy name or settings of its own, which win over those of the policy it names.
 *
 * @see RateLimitProperties#getRoutes()
 */
public class RateLimitRouteProperties {

	/**
	 * Path pattern within the application, such as /api/reports/**.
	 */
	private String path;

	/**
	 * HTTP methods the limit applies to; empty for all.
	 */
	private List<String> methods = new ArrayList<>();

	/**
	 * Name of the policy to apply; without one, the route is named after its methods and path.
	 */
	private String policy;

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
	 * Final HTTP statuses that count, as codes or classes such as 401 or 5xx; empty means every request counts.
	 */
	private List<String> countStatuses = new ArrayList<>();

	/**
	 * Refused at startup: routes never wait, since the filter decides before the handler runs.
	 */
	private Duration maxWait;

	/**
	 * Algorithm and parameters evaluated beside this limit in shadow mode, to compare them before switching.
	 */
	private final RateLimitPolicyProperties.Parameters candidate = new RateLimitPolicyProperties.Parameters();

	/**
	 * Refused at startup: plans belong to a policy, which the route names.
	 */
	private Map<String, RateLimitPolicyProperties.Parameters> plans = new LinkedHashMap<>();

	public String getPath() {
		return this.path;
	}

	public void setPath(String path) {
		this.path = path;
	}

	public List<String> getMethods() {
		return this.methods;
	}

	public void setMethods(List<String> methods) {
		this.methods = methods;
	}

	public String getPolicy() {
		return this.policy;
	}

	public void setPolicy(String policy) {
		this.policy = policy;
	}

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

	public List<String> getCountStatuses() {
		return this.countStatuses;
	}

	public void setCountStatuses(List<String> countStatuses) {
		this.countStatuses = countStatuses;
	}

	public Duration getMaxWait() {
		return this.maxWait;
	}

	public void setMaxWait(Duration maxWait) {
		this.maxWait = maxWait;
	}

	public RateLimitPolicyProperties.Parameters getCandidate() {
		return this.candidate;
	}

	public Map<String, RateLimitPolicyProperties.Parameters> getPlans() {
		return this.plans;
	}

	public void setPlans(Map<String, RateLimitPolicyProperties.Parameters> plans) {
		this.plans = plans;
	}

}
