package io.github.ratelimit.autoconfigure;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.springframework.boot.context.properties.ConfigurationProperties;

import io.github.ratelimit.FailMode;
import io.github.ratelimit.KeySource;
import io.github.ratelimit.internal.pipeline.HeaderStyle;
import io.github.ratelimit.internal.redis.RedisKeyLayout;
import io.github.ratelimit.internal.web.RateLimitFilter;

/**
 * Configuration properties for rate limiting. Policies and routes are bound to
 * {@link RateLimitPolicyProperties} and {@link RateLimitRouteProperties}, client retries to
 * {@link RateLimitClientProperties}. A name under {@code ratelimit} that binds to nothing (a
 * misspelling, most of the time) fails the startup, so that a typo does not leave a limit at
 * its default.
 */
@ConfigurationProperties("ratelimit")
public class RateLimitProperties {

	/**
	 * Whether rate limiting is enabled.
	 */
	private boolean enabled = true;

	/**
	 * Where buckets are kept: auto uses Redis when a RedisConnectionFactory bean exists.
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
	 * Whether limits that set nothing about it run in shadow mode, recording what they would reject.
	 */
	private boolean shadow;

	/**
	 * Whether a settling call that fails or is cancelled having reported no cost keeps its
	 * reservation.
	 */
	private boolean failedCallsKeepReservation = true;

	/**
	 * Style of the rate limit response headers.
	 */
	private HeaderStyle headers = HeaderStyle.IETF;

	/**
	 * Order of the filter enforcing route limits; the default runs it before Spring Security.
	 */
	private int filterOrder = RateLimitFilter.DEFAULT_ORDER;

	private final Tenant tenant = new Tenant();

	private final ClientIp clientIp = new ClientIp();

	private final Memory memory = new Memory();

	private final Redis redis = new Redis();

	private final Plans plans = new Plans();

	/**
	 * Named policies, overriding the values of the annotations and routes of the same name.
	 */
	private Map<String, RateLimitPolicyProperties> policies = new LinkedHashMap<>();

	/**
	 * Limits of request paths, enforced by a filter without annotations.
	 */
	private List<RateLimitRouteProperties> routes = new ArrayList<>();

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

	public boolean isFailedCallsKeepReservation() {
		return this.failedCallsKeepReservation;
	}

	public void setFailedCallsKeepReservation(boolean failedCallsKeepReservation) {
		this.failedCallsKeepReservation = failedCallsKeepReservation;
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

	public Map<String, RateLimitPolicyProperties> getPolicies() {
		return this.policies;
	}

	public void setPolicies(Map<String, RateLimitPolicyProperties> policies) {
		this.policies = policies;
	}

	public List<RateLimitRouteProperties> getRoutes() {
		return this.routes;
	}

	public void setRoutes(List<RateLimitRouteProperties> routes) {
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
		REDIS,

		/**
		 * In a table of the application's PostgreSQL DataSource, shared by every instance (see ratelimit.jdbc).
		 */
		JDBC

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
		 * Prefix length IPv6 clients are aggregated to, so that one host cannot rotate through its addresses.
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
		 * How token and leaky buckets map to Redis keys: a key per bucket, or one hash per limit and Cluster slot.
		 */
		private RedisKeyLayout keyLayout = RedisKeyLayout.KEY_PER_BUCKET;

		/**
		 * Whether scripts run as Redis functions (FCALL) where the server allows it, rather than with EVALSHA.
		 */
		private boolean functions = true;

		/**
		 * Longest time a request waits for Redis; then the fallback (or a 503 for fail-closed limits) answers.
		 */
		private Duration timeout = Duration.ofMillis(250);

		/**
		 * Whether the application's Redis serves rate limits only; its health then stays UP while the fallback decides.
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
		 * How Redis decides: on every request (exact), or on each instance against shares leased from it (local-first).
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

		public String getKeyPrefix() {
			return this.keyPrefix;
		}

		public void setKeyPrefix(String keyPrefix) {
			this.keyPrefix = keyPrefix;
		}

		public RedisKeyLayout getKeyLayout() {
			return this.keyLayout;
		}

		public void setKeyLayout(RedisKeyLayout keyLayout) {
			this.keyLayout = keyLayout;
		}

		public boolean isFunctions() {
			return this.functions;
		}

		public void setFunctions(boolean functions) {
			this.functions = functions;
		}

		public Duration getTimeout() {
			return this.timeout;
		}

		public void setTimeout(Duration timeout) {
			this.timeout = timeout;
		}

		public boolean isRateLimitsOnly() {
			return this.rateLimitsOnly;
		}

		public void setRateLimitsOnly(boolean rateLimitsOnly) {
			this.rateLimitsOnly = rateLimitsOnly;
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

		public Mode getMode() {
			return this.mode;
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

}
