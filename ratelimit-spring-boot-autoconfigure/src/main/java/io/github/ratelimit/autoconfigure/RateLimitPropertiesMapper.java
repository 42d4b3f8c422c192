package io.github.ratelimit.autoconfigure;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;
import java.util.regex.PatternSyntaxException;

import io.github.ratelimit.RateLimitConfigurationException;
import io.github.ratelimit.internal.core.CountedOutcomes;
import io.github.ratelimit.internal.core.LimitResolver;
import io.github.ratelimit.internal.core.LimitSettings;
import io.github.ratelimit.internal.pipeline.ClientIpResolver;
import io.github.ratelimit.internal.pipeline.CostExpressions;
import io.github.ratelimit.internal.pipeline.CountedStatuses;
import io.github.ratelimit.internal.pipeline.IpRange;

/**
 * Turns {@link RateLimitProperties} into validated objects. Every problem is reported as
 * a {@link RateLimitConfigurationException} naming the property and the fix, so that a
 * broken configuration fails at startup. Routes are mapped by
 * {@link RateLimitRoutesMapper}, which needs spring-web: nothing here may reference it,
 * since this class runs in applications without it.
 */
final class RateLimitPropertiesMapper {

	private static final Duration MIN_SYNC_INTERVAL = Duration.ofMillis(1);

	private static final Duration MAX_SYNC_INTERVAL = Duration.ofSeconds(1);

	/** An RFC 9110 field name: a token. */
	private static final Pattern HEADER_NAME = Pattern.compile("[!#$%&'*+.^_`|~0-9A-Za-z-]+");

	private RateLimitPropertiesMapper() {
	}

	static LimitResolver limitResolver(RateLimitProperties properties) {
		validateGeneral(properties);
		Map<String, LimitSettings> policies = new LinkedHashMap<>();
		properties.getPolicies().forEach((name, policy) -> policies.put(name, settings(name, policy)));
		LimitResolver resolver = LimitResolver.builder()
			.policies(policies)
			.defaultKey(properties.getDefaultKey())
			.defaultFailMode(properties.getFailMode())
			.defaultShadow(properties.isShadow())
			.candidates(candidates(properties))
			.plans(plans(properties))
			.build();
		properties.getPolicies().forEach((name, policy) -> {
			if (policy.getCapacity() != null) {
				resolver.validatePolicy(name);
			}
		});
		return resolver;
	}

	private static Map<String, LimitSettings> candidates(RateLimitProperties properties) {
		Map<String, LimitSettings> candidates = new LinkedHashMap<>();
		properties.getPolicies().forEach((name, policy) -> {
			RateLimitPolicyProperties.Parameters candidate = policy.getCandidate();
			if (isSet(candidate)) {
				candidates.put(name, settings(candidate));
			}
		});
		return candidates;
	}

	private static Map<String, Map<String, LimitSettings>> plans(RateLimitProperties properties) {
		List<RateLimitRouteProperties> routes = properties.getRoutes();
		for (int i = 0; i < routes.size(); i++) {
			if (!routes.get(i).getPlans().isEmpty()) {
				throw new RateLimitConfigurationException("ratelimit.routes[" + i + "].plans",
						"plans belong to a policy, not to a route",
						"Move the settings and their plans to ratelimit.policies.<name> and set policy: <name> on the route");
			}
		}
		Map<String, Map<String, LimitSettings>> plans = new LinkedHashMap<>();
		properties.getPolicies().forEach((name, policy) -> {
			Map<String, LimitSettings> byPlan = new LinkedHashMap<>();
			policy.getPlans().forEach((plan, parameters) -> byPlan.put(plan, settings(parameters)));
			if (!byPlan.isEmpty()) {
				plans.put(name, byPlan);
			}
		});
		return plans;
	}

	static String authorityPrefix(RateLimitProperties properties) {
		String prefix = properties.getPlans().getAuthorityPrefix();
		if (prefix == null || prefix.isBlank()) {
			throw new RateLimitConfigurationException("ratelimit.plans.authority-prefix", "must not be empty",
					"Use a prefix that only plan authorities carry, such as PLAN_");
		}
		return prefix;
	}

	static void validateGeneral(RateLimitProperties properties) {
		if (properties.getDefaultKey() == null || properties.getDefaultKey().isEmpty()) {
			throw new RateLimitConfigurationException("ratelimit.default-key", "the default key chain is empty",
					"List at least one of principal, tenant, ip, global");
		}
		double factor = properties.getFallbackFactor();
		if (!(factor > 0 && factor <= 1)) {
			throw new RateLimitConfigurationException("ratelimit.fallback-factor",
					"must be greater than 0 and at most 1: " + factor, "Use a share such as 0.5");
		}
		if (properties.getMemory().getMaximumKeys() <= 0) {
			throw new RateLimitConfigurationException("ratelimit.memory.maximum-keys",
					"must be positive: " + properties.getMemory().getMaximumKeys(), "Use a bound such as 100000");
		}
		String prefix = properties.getRedis().getKeyPrefix();
		if (prefix == null || prefix.indexOf('{') >= 0 || prefix.indexOf('}') >= 0) {
			throw new RateLimitConfigurationException("ratelimit.redis.key-prefix",
					"must be set and must not contain braces: " + prefix,
					"Use a plain prefix such as ratelimit: (braces would pin every key to one cluster slot)");
		}
		RateLimitProperties.Redis redis = properties.getRedis();
		if (redis.getTimeout() == null || redis.getTimeout().isNegative() || redis.getTimeout().isZero()) {
			throw new RateLimitConfigurationException("ratelimit.redis.timeout", "must be positive: " + redis.getTimeout(),
					"Use a short duration such as 250ms: it is added to a request when Redis hangs");
		}
		if (redis.getFailureThreshold() < 1) {
			throw new RateLimitConfigurationException("ratelimit.redis.failure-threshold",
					"must be at least 1: " + redis.getFailureThreshold(), "Use a small count such as 5");
		}
		if (redis.getProbeInterval() == null || redis.getProbeInterval().isNegative()
				|| redis.getProbeInterval().isZero()) {
			throw new RateLimitConfigurationException("ratelimit.redis.probe-interval",
					"must be positive: " + redis.getProbeInterval(), "Use a duration such as 5s");
		}
		Duration sync = redis.getSyncInterval();
		if (sync == null || sync.compareTo(MIN_SYNC_INTERVAL) < 0 || sync.compareTo(MAX_SYNC_INTERVAL) > 0) {
			throw new RateLimitConfigurationException("ratelimit.redis.sync-interval",
					"must be between 1ms and 1s: " + sync,
					"Use a short duration such as 10ms: shares hold about two intervals of demand, which other "
							+ "instances cannot use meanwhile");
		}
		if (redis.getMode() == null) {
			throw new RateLimitConfigurationException("ratelimit.redis.mode", "must be set",
					"Use exact or local-first");
		}
		for (String name : redis.getExactLimits()) {
			if (name == null || name.isBlank()) {
				throw new RateLimitConfigurationException("ratelimit.redis.exact-limits",
						"must not contain a blank name: " + redis.getExactLimits(),
						"List the names of limits to decide exactly, such as login-username");
			}
		}
		tenantPattern(properties);
		clientIpResolver(properties);
	}

	static Pattern tenantPattern(RateLimitProperties properties) {
		String header = properties.getTenant().getHeader();
		if (header == null || header.isBlank()) {
			throw new RateLimitConfigurationException("ratelimit.tenant.header", "must not be empty",
					"Name the request header carrying the tenant id, such as X-Tenant-Id");
		}
		if (!HEADER_NAME.matcher(header).matches()) {
			// no request can carry such a header: tenant keys would silently never apply
			throw new RateLimitConfigurationException("ratelimit.tenant.header",
					"'" + header + "' is not an HTTP header name",
					"Use a header name made of letters, digits and -, such as X-Tenant-Id");
		}
		try {
			return Pattern.compile(properties.getTenant().getPattern());
		}
		catch (PatternSyntaxException | NullPointerException ex) {
			throw new RateLimitConfigurationException("ratelimit.tenant.pattern",
					"'" + properties.getTenant().getPattern() + "' is not a valid regular expression",
					"Use a bounded pattern such as [A-Za-z0-9._:-]{1,64}");
		}
	}

	static ClientIpResolver clientIpResolver(RateLimitProperties properties) {
		List<IpRange> trusted = new ArrayList<>();
		List<String> cidrs = properties.getClientIp().getTrustedProxies();
		for (int i = 0; i < cidrs.size(); i++) {
			try {
				trusted.add(IpRange.parse(cidrs.get(i)));
			}
			catch (IllegalArgumentException ex) {
				throw new RateLimitConfigurationException("ratelimit.client-ip.trusted-proxies[" + i + "]",
						ex.getMessage(), "Use an address or CIDR such as 10.0.0.0/8 or 2001:db8::/32");
			}
		}
		int prefix = properties.getClientIp().getIpv6PrefixLength();
		if (prefix < 1 || prefix > 128) {
			throw new RateLimitConfigurationException("ratelimit.client-ip.ipv6-prefix-length",
					"must be between 1 and 128: " + prefix, "Use 64 to treat one IPv6 subnet as one client");
		}
		return new ClientIpResolver(trusted, prefix);
	}

	/** The settings of a policy; its counted statuses are checked here, where the property is known. */
	static LimitSettings settings(String name, RateLimitPolicyProperties policy) {
		return LimitSettings.builder()
			.algorithm(policy.getAlgorithm())
			.capacity(policy.getCapacity())
			.refillTokens(policy.getRefillTokens())
			.period(policy.getPeriod())
			.cost(policy.getCost())
			.key(policy.getKey())
			.failMode(policy.getFailMode())
			.shadow(policy.getShadow())
			.maxWait(policy.getMaxWait())
			.calendar(policy.getCalendar())
			.timeZone(policy.getTimeZone())
			.unit(policy.getUnit())
			.countStatuses(countStatuses(policy.getCountStatuses(),
					LimitResolver.policyProperty(name) + ".count-statuses"))
			.estimate(CostExpressions.checkEstimate(policy.getEstimate(),
					LimitResolver.policyProperty(name) + ".estimate"))
			.actualCost(CostExpressions.checkActualCost(policy.getActualCost(),
					LimitResolver.policyProperty(name) + ".actual-cost"))
			.actualCostHeader(CostExpressions.checkHeader(policy.getActualCostHeader(),
					LimitResolver.policyProperty(name) + ".actual-cost-header"))
			.build();
	}

	/**
	 * The settings a route carries inline, which win over those of the policy it names.
	 * @param route the route
	 * @param origin the route property, such as {@code ratelimit.routes[0]}
	 */
	static LimitSettings settings(RateLimitRouteProperties route, String origin) {
		return LimitSettings.builder()
			.algorithm(route.getAlgorithm())
			.capacity(route.getCapacity())
			.refillTokens(route.getRefillTokens())
			.period(route.getPeriod())
			.cost(route.getCost())
			.key(route.getKey())
			.failMode(route.getFailMode())
			.shadow(route.getShadow())
			.maxWait(route.getMaxWait())
			.calendar(route.getCalendar())
			.timeZone(route.getTimeZone())
			.unit(route.getUnit())
			.countStatuses(countStatuses(route.getCountStatuses(), origin + ".count-statuses"))
			.build();
	}

	/** The settings of a candidate or a plan: its algorithm and parameters alone. */
	private static LimitSettings settings(RateLimitPolicyProperties.Parameters parameters) {
		return LimitSettings.builder()
			.algorithm(parameters.getAlgorithm())
			.capacity(parameters.getCapacity())
			.refillTokens(parameters.getRefillTokens())
			.period(parameters.getPeriod())
			.build();
	}

	/** Parses {@code count-statuses}; {@code null} (not set) when empty. */
	private static CountedOutcomes countStatuses(List<String> values, String property) {
		if (values == null || values.isEmpty()) {
			return null;
		}
		try {
			return CountedStatuses.parse(values);
		}
		catch (IllegalArgumentException ex) {
			throw new RateLimitConfigurationException(property, ex.getMessage(),
					"Use status codes such as 401 and 403, or classes such as 4xx and 5xx; leave it empty to count every request");
		}
	}

	/** Whether a candidate sets anything, which makes it a candidate to evaluate. */
	private static boolean isSet(RateLimitPolicyProperties.Parameters parameters) {
		return parameters.getAlgorithm() != null || parameters.getCapacity() != null
				|| parameters.getRefillTokens() != null || parameters.getPeriod() != null;
	}

}
