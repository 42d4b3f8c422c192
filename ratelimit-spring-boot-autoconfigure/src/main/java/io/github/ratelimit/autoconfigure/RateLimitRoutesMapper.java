package io.github.ratelimit.autoconfigure;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Set;

import org.springframework.web.util.pattern.PathPattern;
import org.springframework.web.util.pattern.PathPatternParser;
import org.springframework.web.util.pattern.PatternParseException;

import io.github.ratelimit.RateLimitConfigurationException;
import io.github.ratelimit.internal.core.LimitDefinition;
import io.github.ratelimit.internal.core.LimitResolver;
import io.github.ratelimit.internal.core.LimitSettings;
import io.github.ratelimit.internal.pipeline.RouteLimit;

/**
 * Turns {@code ratelimit.routes} into validated {@link RouteLimit route limits}. Kept apart
 * from {@link RateLimitPropertiesMapper} because path patterns come from spring-web, which
 * applications without a servlet web server do not have: only the servlet configuration
 * may load this class.
 */
final class RateLimitRoutesMapper {

	private static final Set<String> HTTP_METHODS = Set.of("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS",
			"TRACE");

	private RateLimitRoutesMapper() {
	}

	static List<RouteLimit> routes(RateLimitProperties properties, LimitResolver resolver) {
		List<RouteLimit> routes = new ArrayList<>();
		List<RateLimitRouteProperties> configured = properties.getRoutes();
		for (int i = 0; i < configured.size(); i++) {
			RateLimitRouteProperties route = configured.get(i);
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
			if (route.getMaxWait() != null) {
				throw new RateLimitConfigurationException(origin + ".max-wait",
						"route limits never wait: the filter decides them before the request reaches its handler",
						"Remove max-wait from the route; to let a controller wait, set maxWait on its @RateLimited");
			}
			String name = route.getPolicy();
			if (name != null && name.isBlank()) {
				name = null;
			}
			if (name != null && !resolver.hasPolicy(name) && route.getCapacity() == null) {
				throw new RateLimitConfigurationException(origin + ".policy",
						"no policy '" + name + "' is configured and the route sets no capacity",
						"Define " + LimitResolver.policyProperty(name) + " or set a capacity on the route");
			}
			String guarded = (methods.isEmpty() ? "" : String.join(",", methods) + " ") + pattern.getPatternString();
			if (name == null) {
				name = guarded;
			}
			LimitSettings settings = RateLimitPropertiesMapper.settings(route, origin);
			LimitDefinition definition = resolver.resolveRoute(name, settings, origin);
			if (definition.settles()) {
				throw new RateLimitConfigurationException(origin + ".policy",
						"policy '" + name + "' settles costs after the call (" + definition.settledCost()
								+ "), which route limits do not: they take their cost before the handler is known",
						"Put the limit on the handler with @RateLimited(\"" + name
								+ "\"), or use a policy without estimate, actual-cost and actual-cost-header");
			}
			routes.add(new RouteLimit(pattern, Set.copyOf(methods), definition));
			resolver.guards(name, origin, guarded);
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

}
