package io.github.ratelimit.autoconfigure;

import java.time.Duration;
import java.time.ZoneId;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.springframework.boot.context.properties.ConfigurationProperties;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.CalendarPeriod;
import io.github.ratelimit.FailMode;
import io.github.ratelimit.KeySource;
import io.github.ratelimit.internal.pipeline.HeaderStyle;
import io.github.ratelimit.internal.redis.RedisKeyLayout;
import io.github.ratelimit.internal.web.RateLimitFilter;

/**
 * Configuration properties for rate limiting. A name under {@code ratelimit} that binds to
 * nothing (a misspelling, most of the time) fails the startup, so that a typo does not
 * leave a limit at its default.
 */
@ConfigurationProperties("ratelimit")
public class RateLimitProperties {

	/**
	 * Whether rate limiting is enabled.
	 */
	private boolean enabled = true;

	/**
	 * Where buckets are kept; auto uses Redis when a RedisConnectionFactory bean exists.
	 */
	private StoreType store = StoreType.AUTO;

	/**
	 * Key sources tried in order for limits that name none.
	 */
	private List<KeySource> defaultKey = new ArrayList<>(List.of(KeySource.PRINCIPAL, KeySource.IP));

	/**
	 * What limits do when their store fails: open lets a local fallback decide, closed answers 503.
	 */
	private FailMode failMode = FailMode.OPEN;

	/**
	 * Share of each limit that the local fallback enforces while the store is failing.
	 */
	private double fallbackFactor = 0.5;

	/**
	 * Whether every limit that sets nothing about it runs in shadow mode: decided, recorded and advertised in headers, but never rejecting.
	 */
	private boolean shadow;

	/**
	 * Style of the rate limit response headers.
	 */
	private HeaderStyle headers = HeaderStyle.IETF;

	/**
	 * Order of the servlet filter enforcing route limits; the default runs it before Spring Security.
	 */
	private int filterOrder = RateLimitFilter.DEFAULT_ORDER;

	private final Tenant tenant = new Tenant();

	private final ClientIp clientIp = new ClientIp();

	private final Memory memory = new Memory();

	private final Redis redis = new Redis();

	private final Plans plans = new Plans();

	private final Client client = new Client();

	/**
	 * Named policies; a policy applies to annotations and routes of the same name and overrides their values.
	 */
	private Map<String, Policy> policies = new LinkedHashMap<>();

	/**
	 * Route limits enforced by the servlet filter, without annotations.
	 */
	private List<Route> routes = new ArrayList<>();

	public boolean isEnabled() {
		return this.enabled;
	}

	public void setEnabled(boolean enabled) {
		this.enabled = enabled;
	}

	public StoreType getStore() {
		return this.store;
	}

	public void setStore(StoreType store) {
		this.store = store;
	}

	public List<KeySource> getDefaultKey() {
		return this.defaultKey;
	}

	public void setDefaultKey(List<KeySource> defaultKey) {
		this.defaultKey = defaultKey;
	}

	public FailMode getFailMode() {
		return this.failMode;
	}

	public void setFailMode(FailMode failMode) {
		this.failMode = failMode;
	}

	public double getFallbackFactor() {
		return this.fallbackFactor;
	}

	public void setFallbackFactor(double fallbackFactor) {
		this.fallbackFactor = fallbackFactor;
	}

	public boolean isShadow() {
		return this.shadow;
	}

	public void setShadow(boolean shadow) {
		this.shadow = shadow;
	}

	public HeaderStyle getHeaders() {
		return this.headers;
	}

	public void setHeaders(HeaderStyle headers) {
		this.headers = headers;
	}

	public int getFilterOrder() {
		return this.filterOrder;
	}

	public void setFilterOrder(int filterOrder) {
		this.filterOrder = filterOrder;
	}

	public Tenant getTenant() {
		return this.tenant;
	}

	public ClientIp getClientIp() {
		return this.clientIp;
	}

	public Memory getMemory() {
		return this.memory;
	}

	public Redis getRedis() {
		return this.redis;
	}

	public Plans getPlans() {
		return this.plans;
	}

	public Client getClient() {
		return this.client;
	}

	public Map<String, Policy> getPolicies() {
		return this.policies;
	}

	public void setPolicies(Map<String, Policy> policies) {
		this.policies = policies;
	}

	public List<Route> getRoutes() {
		return this.routes;
	}

	public void setRoutes(List<Route> routes) {
		this.routes = routes;
	}

	/**
	 * Where buckets are kept.
	 */
	public enum StoreType {

		/**
		 * Redis when a RedisConnectionFactory bean exists, otherwise memory.
		 */
		AUTO,

		/**
		 * In this application instance's memory.
		 */
		MEMORY,

		/**
		 * In Redis, shared by every instance.
		 */
		REDIS

	}

	/**
	 * Tenant identification.
	 */
	public static class Tenant {

		/**
		 * Request header carrying the tenant id.
		 */
		private String header = "X-Tenant-Id";

		/**
		 * Pattern a tenant id must match entirely to be used; other values are ignored.
		 */
		private String pattern = "[A-Za-z0-9._:-]{1,64}";

		public String getHeader() {
			return this.header;
		}

		public void setHeader(String header) {
			this.header = header;
		}

		public String getPattern() {
			return this.pattern;
		}

		public void setPattern(String pattern) {
			this.pattern = pattern;
		}

	}

	/**
	 * Client IP resolution.
	 */
	public static class ClientIp {

		/**
		 * CIDRs of proxies whose X-Forwarded-For and Forwarded headers are believed.
		 */
		private List<String> trustedProxies = new ArrayList<>();

		/**
		 * Prefix length IPv6 clients are aggregated to, so one host cannot rotate through its addresses.
		 */
		private int ipv6PrefixLength = 64;

		public List<String> getTrustedProxies() {
			return this.trustedProxies;
		}

		public void setTrustedProxies(List<String> trustedProxies) {
			this.trustedProxies = trustedProxies;
		}

		public int getIpv6PrefixLength() {
			return this.ipv6PrefixLength;
		}

		public void setIpv6PrefixLength(int ipv6PrefixLength) {
			this.ipv6PrefixLength = ipv6PrefixLength;
		}

	}

	/**
	 * In-memory store.
	 */
	public static class Memory {

		/**
		 * Largest number of buckets kept in memory; beyond it the least valuable are forgotten.
		 */
		private long maximumKeys = 100_000;

		public long getMaximumKeys() {
			return this.maximumKeys;
		}

		public void setMaximumKeys(long maximumKeys) {
			this.maximumKeys = maximumKeys;
		}

	}

	/**
	 * Redis store.
	 */
	public static class Redis {

		/**
		 * Prefix of every key the limiter writes; must not contain braces.
		 */
		private String keyPrefix = "ratelimit:";

		/**
		 * How buckets of token and leaky bucket limits map to Redis keys: a key per bucket, or fields of one hash per limit and Cluster slot, which takes a fraction of the memory per identity (Redis 6.2 or later).
		 */
		private RedisKeyLayout keyLayout = RedisKeyLayout.KEY_PER_BUCKET;

		/**
		 * Whether the scripts run as Redis functions (FUNCTION LOAD once, FCALL per call) where the server runs them (Redis 7 or later), which costs Redis less per call than EVALSHA. A server or user that runs no functions gets EVALSHA by itself; false forces EVALSHA, for a proxy or managed service that refuses functions otherwise.
		 */
		private boolean functions = true;

		/**
		 * Longest time a request waits for Redis; then the fallback (or, for fail-closed limits, a 503) answers.
		 */
		private Duration timeout = Duration.ofMillis(250);

		/**
		 * Whether the application's Redis serves rate limits only: then Spring Boot's redis health indicator is replaced by one that waits for Redis at most the timeout and stays UP while the fallback decides; false keeps Boot's, for a Redis that also holds sessions, caches or data.
		 */
		private boolean rateLimitsOnly = true;

		/**
		 * Consecutive Redis failures after which the circuit breaker stops calling Redis.
		 */
		private int failureThreshold = 5;

		/**
		 * How long the open circuit breaker waits before probing Redis again.
		 */
		private Duration probeInterval = Duration.ofSeconds(5);

		/**
		 * How Redis decides: exact asks it on every request; local-first decides on each instance against shares leased from Redis and settles them every sync interval.
		 */
		private Mode mode = Mode.EXACT;

		/**
		 * Time between two settlements of an instance's shares with Redis, in local-first mode.
		 */
		private Duration syncInterval = Duration.ofMillis(10);

		/**
		 * Names of limits that Redis decides on every request even in local-first mode.
		 */
		private List<String> exactLimits = new ArrayList<>();

		public Mode getMode() {
			return this.mode;
		}

		public boolean isRateLimitsOnly() {
			return this.rateLimitsOnly;
		}

		public void setRateLimitsOnly(boolean rateLimitsOnly) {
			this.rateLimitsOnly = rateLimitsOnly;
		}

		public void setMode(Mode mode) {
			this.mode = mode;
		}

		public Duration getSyncInterval() {
			return this.syncInterval;
		}

		public void setSyncInterval(Duration syncInterval) {
			this.syncInterval = syncInterval;
		}

		public List<String> getExactLimits() {
			return this.exactLimits;
		}

		public void setExactLimits(List<String> exactLimits) {
			this.exactLimits = exactLimits;
		}

		public boolean isFunctions() {
			return this.functions;
		}

		public void setFunctions(boolean functions) {
			this.functions = functions;
		}

		public RedisKeyLayout getKeyLayout() {
			return this.keyLayout;
		}

		public void setKeyLayout(RedisKeyLayout keyLayout) {
			this.keyLayout = keyLayout;
		}

		public String getKeyPrefix() {
			return this.keyPrefix;
		}

		public void setKeyPrefix(String keyPrefix) {
			this.keyPrefix = keyPrefix;
		}

		public Duration getTimeout() {
			return this.timeout;
		}

		public void setTimeout(Duration timeout) {
			this.timeout = timeout;
		}

		public int getFailureThreshold() {
			return this.failureThreshold;
		}

		public void setFailureThreshold(int failureThreshold) {
			this.failureThreshold = failureThreshold;
		}

		public Duration getProbeInterval() {
			return this.probeInterval;
		}

		public void setProbeInterval(Duration probeInterval) {
			this.probeInterval = probeInterval;
		}

		/**
		 * How the Redis store decides.
		 */
		public enum Mode {

			/**
			 * Every request is decided by Redis, in one round trip.
			 */
			EXACT,

			/**
			 * Requests are decided on the instance against shares leased from Redis.
			 */
			LOCAL_FIRST

		}

	}

	/**
	 * How the default plan resolver finds the plan of a request.
	 */
	public static class Plans {

		/**
		 * Prefix of the granted authorities naming a plan: PLAN_pro means plan pro.
		 */
		private String authorityPrefix = "PLAN_";

		public String getAuthorityPrefix() {
			return this.authorityPrefix;
		}

		public void setAuthorityPrefix(String authorityPrefix) {
			this.authorityPrefix = authorityPrefix;
		}

	}

	/**
	 * Calls this application makes to rate-limited APIs.
	 */
	public static class Client {

		private final Retry retry = new Retry();

		public Retry getRetry() {
			return this.retry;
		}

		/**
		 * Retries of refused calls by the auto-configured RestClient.Builder and RestTemplateBuilder.
		 */
		public static class Retry {

			/**
			 * Whether RestClient.Builder and RestTemplateBuilder beans retry calls refused with a retryable status.
			 */
			private boolean enabled;

			/**
			 * Attempts in total for one call, the first one included.
			 */
			private int maxAttempts = 3;

			/**
			 * Time budget of one call from its first attempt; a wait that would end beyond it is not started.
			 */
			private Duration maxTotalTime = Duration.ofSeconds(30);

			/**
			 * Cap of the first jittered back-off, used when the response names no delay.
			 */
			private Duration initialDelay = Duration.ofMillis(100);

			/**
			 * Cap of every back-off; a longer delay demanded by the server ends the call with its response.
			 */
			private Duration maxDelay = Duration.ofSeconds(10);

			/**
			 * Growth of the back-off cap from one retry to the next.
			 */
			private double multiplier = 2.0;

			/**
			 * Request methods that are retried; add POST or PATCH only for endpoints that are idempotent.
			 */
			private List<String> methods = new ArrayList<>(List.of("GET", "HEAD", "OPTIONS", "PUT", "DELETE", "TRACE"));

			/**
			 * Response statuses that are retried.
			 */
			private List<Integer> statuses = new ArrayList<>(List.of(429, 503));

			public boolean isEnabled() {
				return this.enabled;
			}

			public void setEnabled(boolean enabled) {
				this.enabled = enabled;
			}

			public int getMaxAttempts() {
				return this.maxAttempts;
			}

			public void setMaxAttempts(int maxAttempts) {
				this.maxAttempts = maxAttempts;
			}

			public Duration getMaxTotalTime() {
				return this.maxTotalTime;
			}

			public void setMaxTotalTime(Duration maxTotalTime) {
				this.maxTotalTime = maxTotalTime;
			}

			public Duration getInitialDelay() {
				return this.initialDelay;
			}

			public void setInitialDelay(Duration initialDelay) {
				this.initialDelay = initialDelay;
			}

			public Duration getMaxDelay() {
				return this.maxDelay;
			}

			public void setMaxDelay(Duration maxDelay) {
				this.maxDelay = maxDelay;
			}

			public double getMultiplier() {
				return this.multiplier;
			}

			public void setMultiplier(double multiplier) {
				this.multiplier = multiplier;
			}

			public List<String> getMethods() {
				return this.methods;
			}

			public void setMethods(List<String> methods) {
				this.methods = methods;
			}

			public List<Integer> getStatuses() {
				return this.statuses;
			}

			public void setStatuses(List<Integer> statuses) {
				this.statuses = statuses;
			}

		}

	}

	/**
	 * Settings of a limit; unset values come from the annotation or the defaults.
	 */
	public static class Policy extends Parameters {

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
		 * Whether this limit runs in shadow mode (records what it would reject, never rejects); unset means ratelimit.shadow.
		 */
		private Boolean shadow;

		/**
		 * Another algorithm or parameters evaluated beside this policy in shadow mode, to compare them before switching; unset values are the policy's.
		 */
		private final Parameters candidate = new Parameters();

		/**
		 * Longest time a call waits for a permit instead of being rejected; unset means the annotation's maxWait (no waiting), and routes never wait.
		 */
		private Duration maxWait;

		/**
		 * Per-plan overrides of capacity, refill-tokens and period, by plan name; a request of no plan, or of one not listed, gets the policy's own values.
		 */
		private Map<String, Parameters> plans = new LinkedHashMap<>();

		/**
		 * Calendar unit (day, week or month) whose windows this fixed-window limit counts, turning over at local midnight in time-zone; none means windows of the period.
		 */
		private CalendarPeriod calendar;

		/**
		 * Time zone whose local midnight starts the windows of a calendar quota; unset means UTC.
		 */
		private ZoneId timeZone;

		/**
		 * Final HTTP statuses that count against this limit, as codes or classes (401, 403, 4xx, 5xx); a request answered with another status is given back what it consumed. Empty means every request counts.
		 */
		private List<String> countStatuses = new ArrayList<>();

		public List<String> getCountStatuses() {
			return this.countStatuses;
		}

		public void setCountStatuses(List<String> countStatuses) {
			this.countStatuses = countStatuses;
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

		public Parameters getCandidate() {
			return this.candidate;
		}

		public Duration getMaxWait() {
			return this.maxWait;
		}

		public void setMaxWait(Duration maxWait) {
			this.maxWait = maxWait;
		}

		public Map<String, Parameters> getPlans() {
			return this.plans;
		}

		public void setPlans(Map<String, Parameters> plans) {
			this.plans = plans;
		}

		public Boolean getShadow() {
			return this.shadow;
		}

		public void setShadow(Boolean shadow) {
			this.shadow = shadow;
		}

		public FailMode getFailMode() {
			return this.failMode;
		}

		public void setFailMode(FailMode failMode) {
			this.failMode = failMode;
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

	}

	/**
	 * Algorithm and parameters of a limit.
	 */
	public static class Parameters {

		/**
		 * Algorithm deciding the requests.
		 */
		private Algorithm algorithm;

		/**
		 * Bucket size, or requests per window.
		 */
		private Long capacity;

		/**
		 * Tokens added per period for the bucket algorithms; 0 means the capacity.
		 */
		private Long refillTokens;

		/**
		 * Refill period or window length.
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

		boolean isSet() {
			return this.algorithm != null || this.capacity != null || this.refillTokens != null || this.period != null;
		}

	}

	/**
	 * A route limit: a path pattern, optional methods, and a policy name or inline settings.
	 */
	public static class Route extends Policy {

		/**
		 * Path pattern within the application, such as /api/reports/**.
		 */
		private String path;

		/**
		 * HTTP methods the limit applies to; empty for all.
		 */
		private List<String> methods = new ArrayList<>();

		/**
		 * Name of the policy to apply; without it the route is named after its methods and path.
		 */
		private String policy;

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

	}

}
