package io.github.ratelimit.autoconfigure;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;

import org.springframework.web.util.pattern.PathPattern;
import org.springframework.web.util.pattern.PathPatternParser;
import org.springframework.web.util.pattern.PatternParseException;

import io.github.ratelimit.RateLimitConfigurationException;
import io.github.ratelimit.internal.overload.LimitBounds;
import io.github.ratelimit.internal.overload.OverloadLimiter;
import io.github.ratelimit.internal.pipeline.PriorityRoute;

/**
 * Turns {@link RateLimitOverloadProperties} into the overload limiter and the gate's
 * settings, failing the startup on a value that names the property and the fix.
 */
final class RateLimitOverloadMapper {

	private static final String PREFIX = "ratelimit.overload.";

	private static final Set<String> HTTP_METHODS = Set.of("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS",
			"TRACE");

	private RateLimitOverloadMapper() {
	}

	static OverloadLimiter limiter(RateLimitOverloadProperties properties) {
		LimitBounds bounds = bounds(properties);
		Duration slowCall = properties.getSlowCall();
		if (slowCall == null || slowCall.isNegative()) {
			throw new RateLimitConfigurationException(PREFIX + "slow-call", "must not be negative: " + slowCall,
					"Use a duration such as 2s, or 0 to judge calls by their failures alone");
		}
		requirePositive("retry-after", properties.getRetryAfter(), "Use a duration such as 1s");
		Duration criticalWait = properties.getCriticalWait();
		if (criticalWait == null || criticalWait.isNegative()) {
			throw new RateLimitConfigurationException(PREFIX + "critical-wait", "must not be negative: " + criticalWait,
					"Use a duration such as 100ms, or 0 to turn critical requests away at once like the others");
		}
		RateLimitOverloadProperties.Reserved reserved = properties.getReserved();
		double critical = reserved.getCritical();
		double normal = reserved.getNormal();
		if (!(critical >= 0 && critical < 1)) {
			throw new RateLimitConfigurationException(PREFIX + "reserved.critical",
					"must be at least 0 and below 1: " + critical, "Use a share such as 0.2");
		}
		if (!(normal >= 0 && normal < 1)) {
			throw new RateLimitConfigurationException(PREFIX + "reserved.normal",
					"must be at least 0 and below 1: " + normal, "Use a share such as 0.1");
		}
		if (critical + normal >= 1) {
			throw new RateLimitConfigurationException(PREFIX + "reserved",
					"reserved.critical and reserved.normal must leave a share for sheddable requests, but sum to "
							+ (critical + normal),
					"Lower them so that they sum to less than 1, such as 0.2 and 0.1");
		}
		return OverloadLimiter.builder(properties.getAlgorithm().create(bounds, slowCall))
			.reserves(critical, normal)
			.shadow(properties.isShadow())
			.criticalWait(criticalWait)
			.build();
	}

	private static LimitBounds bounds(RateLimitOverloadProperties properties) {
		int min = properties.getMinLimit();
		int max = properties.getMaxLimit();
		int initial = properties.getInitialLimit();
		if (min < 1) {
			throw new RateLimitConfigurationException(PREFIX + "min-limit", "must be at least 1: " + min,
					"Use a small count such as 4: a service always serves some requests at once");
		}
		if (max < min) {
			throw new RateLimitConfigurationException(PREFIX + "max-limit",
					"must be at least min-limit (" + min + "): " + max, "Raise max-limit or lower min-limit");
		}
		if (initial < min || initial > max) {
			throw new RateLimitConfigurationException(PREFIX + "initial-limit",
					"must be between min-limit and max-limit (" + min + ".." + max + "): " + initial,
					"Use a count within the bounds");
		}
		return new LimitBounds(initial, min, max);
	}

	static List<PathPattern> patterns(List<String> paths, String property) {
		List<PathPattern> patterns = new ArrayList<>(paths.size());
		for (int i = 0; i < paths.size(); i++) {
			patterns.add(pattern(paths.get(i), PREFIX + property + "[" + i + "]"));
		}
		return patterns;
	}

	static List<PriorityRoute> routes(RateLimitOverloadProperties properties) {
		List<PriorityRoute> routes = new ArrayList<>();
		List<RateLimitOverloadProperties.Priority> configured = properties.getPriorities();
		for (int i = 0; i < configured.size(); i++) {
			RateLimitOverloadProperties.Priority route = configured.get(i);
			String origin = PREFIX + "priorities[" + i + "]";
			PathPattern pattern = pattern(route.getPath(), origin + ".path");
			Set<String> methods = new HashSet<>();
			for (String method : route.getMethods()) {
				String upper = method.trim().toUpperCase(Locale.ROOT);
				if (!HTTP_METHODS.contains(upper)) {
					throw new RateLimitConfigurationException(origin + ".methods",
							"'" + method + "' is not an HTTP method", "Use methods such as GET, POST, PUT or DELETE");
				}
				methods.add(upper);
			}
			if (route.getPriority() == null) {
				throw new RateLimitConfigurationException(origin + ".priority", "a priority route needs a priority",
						"Set priority to critical, normal or sheddable");
			}
			routes.add(new PriorityRoute(pattern, methods, route.getPriority()));
		}
		return routes;
	}

	private static PathPattern pattern(String path, String origin) {
		if (path == null || path.isBlank()) {
			throw new RateLimitConfigurationException(origin, "a path pattern is needed",
					"Set a pattern such as /api/search/**");
		}
		try {
			return PathPatternParser.defaultInstance.parse(path);
		}
		catch (PatternParseException ex) {
			throw new RateLimitConfigurationException(origin,
					"'" + path + "' is not a valid path pattern: " + ex.getMessage(),
					"Use a Spring path pattern such as /api/orders/{id} or /api/search/**");
		}
	}

	private static void requirePositive(String property, Duration value, String action) {
		if (value == null || value.isNegative() || value.isZero()) {
			throw new RateLimitConfigurationException(PREFIX + property, "must be positive: " + value, action);
		}
	}

}
