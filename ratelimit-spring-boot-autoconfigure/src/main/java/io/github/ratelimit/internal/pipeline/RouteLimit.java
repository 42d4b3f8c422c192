package io.github.ratelimit.internal.pipeline;

import java.util.Set;

import org.springframework.http.server.PathContainer;
import org.springframework.web.util.pattern.PathPattern;

import io.github.ratelimit.internal.core.LimitDefinition;

/**
 * A limit enforced on every request matching a path pattern (and, optionally, methods),
 * configured under {@code ratelimit.routes}.
 *
 * @param pattern the path pattern
 * @param methods the HTTP methods, empty for all
 * @param definition the limit
 */
public record RouteLimit(PathPattern pattern, Set<String> methods, LimitDefinition definition) {

	public RouteLimit {
		methods = Set.copyOf(methods);
	}

	/**
	 * Whether a request matches.
	 * @param method the request method
	 * @param path the normalised path within the application
	 * @return whether it matches
	 */
	public boolean matches(String method, PathContainer path) {
		return appliesTo(method) && this.pattern.matches(path);
	}

	/** Spring MVC answers HEAD with the GET handler, so a GET route limits HEAD too. */
	boolean appliesTo(String method) {
		return this.methods.isEmpty() || this.methods.contains(method)
				|| ("HEAD".equals(method) && this.methods.contains("GET"));
	}

}
