package io.github.ratelimit.pipeline;

import java.util.Set;

/**
 * Names of unnamed handler limits: the HTTP method and the route template. A handler
 * mapped to no particular method is named after its template alone, so every method
 * shares one bucket and no request can mint new names. HEAD counts as GET, which Spring
 * MVC serves it with.
 */
public final class RouteNames {

	private RouteNames() {
	}

	/**
	 * The canonical route name of a request.
	 * @param declaredMethods the HTTP methods the handler is mapped to, empty for all
	 * @param requestMethod the method of the request
	 * @param pattern the route template that matched
	 * @return the name, such as {@code GET /orders/{id}}
	 */
	public static String of(Set<String> declaredMethods, String requestMethod, String pattern) {
		if (declaredMethods.isEmpty()) {
			return pattern;
		}
		String method = ("HEAD".equals(requestMethod) && !declaredMethods.contains("HEAD")) ? "GET" : requestMethod;
		return method + " " + pattern;
	}

}
