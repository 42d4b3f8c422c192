package io.github.ratelimit.autoconfigure;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import org.springframework.boot.context.properties.ConfigurationProperties;

import io.github.ratelimit.RequestPriority;
import io.github.ratelimit.internal.overload.AdaptiveLimits;

/**
 * Configuration properties of overload protection: an adaptive limit on the calls in
 * flight in this instance, learned from their latency and failures, that turns requests
 * away by priority when the service saturates.
 */
@ConfigurationProperties("ratelimit.overload")
public class RateLimitOverloadProperties {

	/**
	 * Whether requests are admitted under an adaptive limit on the calls in flight.
	 */
	private boolean enabled;

	/**
	 * Whether requests over the limit are admitted anyway and only counted as shadow_shed.
	 */
	private boolean shadow;

	/**
	 * Algorithm that learns the limit from how calls end: vegas, gradient2 or aimd.
	 */
	private AdaptiveLimits algorithm = AdaptiveLimits.VEGAS;

	/**
	 * Limit on calls in flight before anything is learned.
	 */
	private int initialLimit = 20;

	/**
	 * Lowest limit on calls in flight, however overloaded the service is.
	 */
	private int minLimit = 4;

	/**
	 * Highest limit on calls in flight, however well calls go.
	 */
	private int maxLimit = 1000;

	/**
	 * Duration beyond which a call counts as a sign of overload, like a 5xx answer; 0 for none.
	 */
	private Duration slowCall = Duration.ZERO;

	/**
	 * Shares of the limit kept for higher priorities.
	 */
	private final Reserved reserved = new Reserved();

	/**
	 * Path patterns of the requests the limit covers; empty for every request.
	 */
	private List<String> paths = new ArrayList<>();

	/**
	 * Path patterns of requests never counted nor turned away, beside the actuator's.
	 */
	private List<String> excludePaths = new ArrayList<>();

	/**
	 * Request header whose value (critical, normal or sheddable) is believed; set only behind a gateway that sets it.
	 */
	private String priorityHeader = "";

	/**
	 * Priority of a request no resolver, header, route or annotation ranks.
	 */
	private RequestPriority defaultPriority = RequestPriority.NORMAL;

	/**
	 * Priorities of requests by path pattern and methods, the most specific pattern first.
	 */
	private List<Priority> priorities = new ArrayList<>();

	/**
	 * Delay a turned-away client is told to wait in Retry-After, rounded up to seconds.
	 */
	private Duration retryAfter = Duration.ofSeconds(1);

	/**
	 * Longest a critical request that finds the limit full waits for a place before it is turned away; 0 for not at all.
	 */
	private Duration criticalWait = Duration.ofMillis(100);

	public boolean isEnabled() {
		return this.enabled;
	}

	public void setEnabled(boolean enabled) {
		this.enabled = enabled;
	}

	public boolean isShadow() {
		return this.shadow;
	}

	public void setShadow(boolean shadow) {
		this.shadow = shadow;
	}

	public AdaptiveLimits getAlgorithm() {
		return this.algorithm;
	}

	public void setAlgorithm(AdaptiveLimits algorithm) {
		this.algorithm = algorithm;
	}

	public int getInitialLimit() {
		return this.initialLimit;
	}

	public void setInitialLimit(int initialLimit) {
		this.initialLimit = initialLimit;
	}

	public int getMinLimit() {
		return this.minLimit;
	}

	public void setMinLimit(int minLimit) {
		this.minLimit = minLimit;
	}

	public int getMaxLimit() {
		return this.maxLimit;
	}

	public void setMaxLimit(int maxLimit) {
		this.maxLimit = maxLimit;
	}

	public Duration getSlowCall() {
		return this.slowCall;
	}

	public void setSlowCall(Duration slowCall) {
		this.slowCall = slowCall;
	}

	public Reserved getReserved() {
		return this.reserved;
	}

	public List<String> getPaths() {
		return this.paths;
	}

	public void setPaths(List<String> paths) {
		this.paths = paths;
	}

	public List<String> getExcludePaths() {
		return this.excludePaths;
	}

	public void setExcludePaths(List<String> excludePaths) {
		this.excludePaths = excludePaths;
	}

	public String getPriorityHeader() {
		return this.priorityHeader;
	}

	public void setPriorityHeader(String priorityHeader) {
		this.priorityHeader = priorityHeader;
	}

	public RequestPriority getDefaultPriority() {
		return this.defaultPriority;
	}

	public void setDefaultPriority(RequestPriority defaultPriority) {
		this.defaultPriority = defaultPriority;
	}

	public List<Priority> getPriorities() {
		return this.priorities;
	}

	public void setPriorities(List<Priority> priorities) {
		this.priorities = priorities;
	}

	public Duration getRetryAfter() {
		return this.retryAfter;
	}

	public void setRetryAfter(Duration retryAfter) {
		this.retryAfter = retryAfter;
	}

	public Duration getCriticalWait() {
		return this.criticalWait;
	}

	public void setCriticalWait(Duration criticalWait) {
		this.criticalWait = criticalWait;
	}

	/**
	 * Shares of the limit that lower priorities may not fill.
	 */
	public static class Reserved {

		/**
		 * Share of the limit only critical requests may fill.
		 */
		private double critical = 0.2;

		/**
		 * Further share of the limit only normal and critical requests may fill.
		 */
		private double normal = 0.1;

		public double getCritical() {
			return this.critical;
		}

		public void setCritical(double critical) {
			this.critical = critical;
		}

		public double getNormal() {
			return this.normal;
		}

		public void setNormal(double normal) {
			this.normal = normal;
		}

	}

	/**
	 * The priority of the requests matching a path pattern.
	 */
	public static class Priority {

		/**
		 * Path pattern, such as /api/search/**.
		 */
		private String path;

		/**
		 * HTTP methods the entry applies to; empty for all.
		 */
		private List<String> methods = new ArrayList<>();

		/**
		 * Priority of the matching requests.
		 */
		private RequestPriority priority;

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

		public RequestPriority getPriority() {
			return this.priority;
		}

		public void setPriority(RequestPriority priority) {
			this.priority = priority;
		}

	}

}
