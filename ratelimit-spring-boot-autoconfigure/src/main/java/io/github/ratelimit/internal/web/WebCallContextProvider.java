package io.github.ratelimit.internal.web;

import java.lang.reflect.Method;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;

import org.springframework.web.context.request.RequestAttributes;
import org.springframework.web.context.request.RequestContextHolder;
import org.springframework.web.context.request.ServletRequestAttributes;
import org.springframework.web.method.HandlerMethod;
import org.springframework.web.servlet.HandlerMapping;

import io.github.ratelimit.internal.pipeline.CallContext;
import io.github.ratelimit.internal.pipeline.CallContextProvider;
import io.github.ratelimit.internal.pipeline.DetachedCallContext;
import io.github.ratelimit.internal.pipeline.RequestCallContext;
import io.github.ratelimit.internal.pipeline.RequestRateLimiter;
import io.github.ratelimit.internal.pipeline.RouteNames;

/**
 * Gives rate limited calls running inside a servlet request access to that request: its
 * canonical route, its identity, its deferred route limits and its response headers.
 */
public final class WebCallContextProvider implements CallContextProvider {

	private final RequestRateLimiter limiter;

	private final Map<Method, Set<String>> declaredMethods = new ConcurrentHashMap<>();

	/**
	 * Creates a provider.
	 * @param limiter the request limiter
	 */
	public WebCallContextProvider(RequestRateLimiter limiter) {
		this.limiter = limiter;
	}

	@Override
	public CallContext current() {
		RequestAttributes attributes = RequestContextHolder.getRequestAttributes();
		if (!(attributes instanceof ServletRequestAttributes servlet)) {
			return DetachedCallContext.INSTANCE;
		}
		HttpServletRequest request = servlet.getRequest();
		HttpServletResponse response = servlet.getResponse();
		return new RequestCallContext(this.limiter, new ServletRateLimitRequest(request),
				ServletRateLimitRequest.stateOrCreate(request),
				new RequestCallContext.WebHooks((method) -> handlerRouteName(request, method), (name, value) -> {
					if (response != null) {
						ServletRateLimitRequest.setHeader(response, name, value);
					}
				}, (create) -> create ? ServletRateLimitRequest.costsOrCreate(request)
						: ServletRateLimitRequest.costs(request)));
	}

	/** The canonical route of the request when {@code method} is its handler. */
	private String handlerRouteName(HttpServletRequest request, Method method) {
		Object handler = request.getAttribute(HandlerMapping.BEST_MATCHING_HANDLER_ATTRIBUTE);
		if (handler instanceof HandlerMethod handlerMethod && handlerMethod.getMethod().equals(method)) {
			return routeName(request, handlerMethod);
		}
		return null;
	}

	/**
	 * The canonical route name of a request handled by {@code handler}.
	 * @param request the request
	 * @param handler its handler
	 * @return the route name, or {@code null} before handler mapping
	 */
	String routeName(HttpServletRequest request, HandlerMethod handler) {
		Object pattern = request.getAttribute(HandlerMapping.BEST_MATCHING_PATTERN_ATTRIBUTE);
		if (pattern == null) {
			return null;
		}
		Set<String> declared = this.declaredMethods.computeIfAbsent(handler.getMethod(),
				(method) -> RouteNames.declaredMethods(handler.getBeanType(), handler.getMethod()));
		return RouteNames.of(declared, request.getMethod(), pattern.toString());
	}

}
