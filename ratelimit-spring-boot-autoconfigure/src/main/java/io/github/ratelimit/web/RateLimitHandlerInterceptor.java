package io.github.ratelimit.web;

import java.util.List;

import jakarta.servlet.DispatcherType;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;

import org.springframework.web.method.HandlerMethod;
import org.springframework.web.servlet.HandlerInterceptor;

import io.github.ratelimit.aop.RateLimitedMethods;
import io.github.ratelimit.core.Acquisition;

/**
 * Decides route limits keyed on the principal once Spring Security has authenticated the
 * request. When the handler has {@code @RateLimited} limits of its own, they are left to
 * the method interceptor, which decides everything in one call.
 */
public class RateLimitHandlerInterceptor implements HandlerInterceptor {

	private final WebRateLimiter limiter;

	private final RateLimitedMethods methods;

	/**
	 * Creates an interceptor.
	 * @param limiter the web limiter
	 * @param methods finds annotated handlers
	 */
	public RateLimitHandlerInterceptor(WebRateLimiter limiter, RateLimitedMethods methods) {
		this.limiter = limiter;
		this.methods = methods;
	}

	@Override
	public boolean preHandle(HttpServletRequest request, HttpServletResponse response, Object handler)
			throws Exception {
		if (request.getDispatcherType() != DispatcherType.REQUEST || !this.limiter.hasDeferred(request)) {
			return true;
		}
		if (handler instanceof HandlerMethod method && this.methods.isRateLimited(method.getMethod(), method.getBeanType())) {
			return true;
		}
		List<Acquisition> acquisitions = this.limiter.takeDeferred(request);
		return this.limiter.decide(acquisitions, request, response);
	}

}
