package io.github.ratelimit.internal.pipeline;

import java.lang.reflect.AnnotatedElement;
import java.lang.reflect.Method;
import java.util.HashSet;
import java.util.Set;

import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RequestMethod;

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
	 * @param pattern the route template that matched; empty for a mapping without a path,
	 * which is named {@code /}
	 * @return the name, such as {@code GET /orders/{id}}
	 */
	public static String of(Set<String> declaredMethods, String requestMethod, String pattern) {
		// a mapping without a path (an empty pattern) serves the root
		String template = pattern.isEmpty() ? "/" : pattern;
		if (declaredMethods.isEmpty()) {
			return template;
		}
		String method = ("HEAD".equals(requestMethod) && !declaredMethods.contains("HEAD")) ? "GET" : requestMethod;
		return method + " " + template;
	}

	/**
	 * The HTTP methods a handler is mapped to, combining the mappings of its type and its
	 * method as Spring MVC and WebFlux do.
	 * @param beanType the handler's type
	 * @param method the handler method
	 * @return the methods, empty when the handler takes every method
	 */
	public static Set<String> declaredMethods(Class<?> beanType, Method method) {
		Set<String> methods = new HashSet<>();
		for (AnnotatedElement element : new AnnotatedElement[] { beanType, method }) {
			RequestMapping mapping = AnnotatedElementUtils.findMergedAnnotation(element, RequestMapping.class);
			if (mapping != null) {
				for (RequestMethod requestMethod : mapping.method()) {
					methods.add(requestMethod.name());
				}
			}
		}
		return Set.copyOf(methods);
	}

}
