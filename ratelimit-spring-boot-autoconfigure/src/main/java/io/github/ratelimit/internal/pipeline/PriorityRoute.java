package io.github.ratelimit.internal.pipeline;

import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;

import org.jspecify.annotations.Nullable;

import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.http.server.PathContainer;
import org.springframework.util.ClassUtils;
import org.springframework.web.method.HandlerMethod;
import org.springframework.web.util.pattern.PathPattern;

import io.github.ratelimit.OverloadPriority;
import io.github.ratelimit.RequestPriority;

/**
 * The priority of the requests matching a path pattern (and, optionally, methods): a
 * route under {@code ratelimit.overload.priorities}, or a handler annotated with
 * {@link OverloadPriority}.
 *
 * @param pattern the path pattern
 * @param methods the HTTP methods, empty for all
 * @param priority the priority of the matching requests; {@code null} for a handler that
 * declares none, whose requests take the default priority
 */
public record PriorityRoute(PathPattern pattern, Set<String> methods, @Nullable RequestPriority priority) {

	/** The most specific pattern first; patterns equally specific keep their order. */
	private static final Comparator<PriorityRoute> MOST_SPECIFIC_FIRST = Comparator.comparing(PriorityRoute::pattern);

	public PriorityRoute {
		methods = Set.copyOf(methods);
	}

	/**
	 * Whether a request matches.
	 * @param method the request method
	 * @param path the normalised path within the application
	 * @return whether it matches
	 */
	public boolean matches(String method, PathContainer path) {
		return (this.methods.isEmpty() || this.methods.contains(method)
				|| ("HEAD".equals(method) && this.methods.contains("GET"))) && this.pattern.matches(path);
	}

	/**
	 * Routes in the order they are tried: the most specific pattern first, as handlers are
	 * chosen, so that {@code /api/orders/{id}} wins over {@code /api/**}.
	 * @param routes the routes
	 * @return the routes, sorted
	 */
	public static List<PriorityRoute> mostSpecificFirst(Collection<PriorityRoute> routes) {
		List<PriorityRoute> sorted = new ArrayList<>(routes);
		sorted.sort(MOST_SPECIFIC_FIRST);
		return List.copyOf(sorted);
	}

	/**
	 * One route per pattern of every handler of a handler mapping, with the priority the
	 * handler declares with {@link OverloadPriority} or none: a request is ranked by the
	 * handler that serves it, not by an annotated pattern that merely matches its path.
	 * @param <I> the mapping's type of request mapping info (servlet or reactive)
	 * @param handlers the mapping's handler methods by their mapping info
	 * @param methods the HTTP method names a mapping info restricts to, empty for all
	 * @param patterns the path patterns of a mapping info
	 * @return the routes, in no particular order
	 */
	public static <I> List<PriorityRoute> ofHandlers(Map<I, HandlerMethod> handlers,
			Function<I, Set<String>> methods, Function<I, Collection<PathPattern>> patterns) {
		List<PriorityRoute> routes = new ArrayList<>();
		handlers.forEach((info, handler) -> {
			RequestPriority priority = declared(handler.getMethod(), ClassUtils.getUserClass(handler.getBeanType()));
			Set<String> allowed = methods.apply(info);
			for (PathPattern pattern : patterns.apply(info)) {
				routes.add(new PriorityRoute(pattern, allowed, priority));
			}
		});
		return routes;
	}

	/**
	 * The priority a handler method declares with {@link OverloadPriority}: on the method,
	 * else on its class.
	 * @param method the handler method
	 * @param beanType the class of the handler bean (the user class, not a proxy)
	 * @return the priority, or {@code null} when neither is annotated
	 */
	public static @Nullable RequestPriority declared(Method method, Class<?> beanType) {
		OverloadPriority annotation = AnnotatedElementUtils.findMergedAnnotation(method, OverloadPriority.class);
		if (annotation == null) {
			annotation = AnnotatedElementUtils.findMergedAnnotation(beanType, OverloadPriority.class);
		}
		return (annotation != null) ? annotation.value() : null;
	}

}
