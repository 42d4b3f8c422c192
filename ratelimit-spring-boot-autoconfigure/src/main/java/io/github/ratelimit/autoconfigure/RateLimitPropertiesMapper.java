package io.github.ratelimit.autoconfigure;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;
import java.util.regex.PatternSyntaxException;

import org.springframework.web.util.pattern.PathPattern;
import org.springframework.web.util.pattern.PathPatternParser;
import org.springframework.web.util.pattern.PatternParseException;

import io.github.ratelimit.RateLimitConfigurationException;
import io.github.ratelimit.core.LimitResolver;
import io.github.ratelimit.core.LimitSettings;
import io.github.ratelimit.web.ClientIpResolver;
import io.github.ratelimit.web.IpRange;
import io.github.ratelimit.web.RouteLimit;

/**
 * Turns {@link RateLimitProperties} into validated objects. Every problem is reported as
 * a {@link RateLimitConfigurationException} naming the property and the fix, so that a
 * broken configuration fails at startup.
 */
final class RateLimitPropertiesMapper {

	private static final Set<String> HTTP_METHODS = Set.of("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS",
			"TRACE");

	private RateLimitPropertiesMapper() {
	}

	static LimitResolver limitResolver(RateLimitProperties properties) {
		validateGeneral(properties);
		Map<String, LimitSettings> policies = new LinkedHashMap<>();
		properties.getPolicies().forEach((name, policy) -> policies.put(name, settings(policy)));
		LimitResolver resolver = new LimitResolver(policies, properties.getDefaultKey());
		properties.getPolicies().forEach((name, policy) -> {
			if (policy.getCapacity() != null) {
				resolver.validatePolicy(name);
			}
		});
		return resolver;
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
		if (properties.getStore() == RateLimitProperties.StoreType.REDIS) {
			throw new RateLimitConfigurationException("ratelimit.store",
					"the Redis store is not available in this version", "Use ratelimit.store=memory or auto");
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

	static List<RouteLimit> routes(RateLimitProperties properties, LimitResolver resolver) {
		List<RouteLimit> routes = new ArrayList<>();
		List<RateLimitProperties.Route> configured = properties.getRoutes();
		for (int i = 0; i < configured.size(); i++) {
			RateLimitProperties.Route route = configured.get(i);
			String origin = "ratelimit.routes[" + i + "]";
			PathPattern pattern = pattern(route.getPath(), origin);
			List<String> methods = new ArrayList<>();
			for (String method : route.getMethods()) {
				String upper = method.trim().toUpperCase(Locale.ROOT);
				if (!HTTP_METHODS.contains(upper)) {
					throw new RateLimitConfigurationException(origin + ".methods",
							"'" + method + "' is not an HTTP method", "Use methods such as GET, POST, PUT or DELETE");
				}
				methods.add(upper);
			}
			String name = route.getPolicy();
			if (name != null && name.isBlank()) {
				name = null;
			}
			if (name != null && !resolver.hasPolicy(name) && route.getCapacity() == null) {
				throw new RateLimitConfigurationException(origin + ".policy",
						"no policy '" + name + "' is configured and the route sets no capacity",
						"Define ratelimit.policies." + name + " or set a capacity on the route");
			}
			if (name == null) {
				name = (methods.isEmpty() ? "" : String.join(",", methods) + " ") + pattern.getPatternString();
			}
			routes.add(new RouteLimit(pattern, Set.copyOf(methods), resolver.resolveRoute(name, settings(route), origin)));
		}
		return routes;
	}

	private static PathPattern pattern(String path, String origin) {
		if (path == null || path.isBlank()) {
			throw new RateLimitConfigurationException(origin + ".path", "a route needs a path pattern",
					"Set a pattern such as /api/reports/**");
		}
		try {
			return PathPatternParser.defaultInstance.parse(path);
		}
		catch (PatternParseException ex) {
			throw new RateLimitConfigurationException(origin + ".path",
					"'" + path + "' is not a valid path pattern: " + ex.getMessage(),
					"Use a Spring path pattern such as /api/orders/{id} or /api/reports/**");
		}
	}

	private static LimitSettings settings(RateLimitProperties.Policy policy) {
		return new LimitSettings(policy.getAlgorithm(), policy.getCapacity(), policy.getRefillTokens(),
				policy.getPeriod(), policy.getCost(), policy.getKey(), null);
	}

}
