package io.github.ratelimit.internal.web;

import java.util.List;

import jakarta.servlet.DispatcherType;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;

import org.springframework.web.method.HandlerMethod;
import org.springframework.web.servlet.HandlerInterceptor;

import io.github.ratelimit.internal.pipeline.MethodLimits;
import io.github.ratelimit.internal.pipeline.RequestLimits;
import io.github.ratelimit.internal.pipeline.RequestRateLimiter;
import io.github.ratelimit.store.Acquisition;

/**
 * Decides route limits keyed on the principal once Spring Security has authenticated the
 * request. When the handler has {@code @RateLimited} limits of its own, they are left to
 * the method interceptor, which decides everything in one call.
 */
public class RateLimitHandlerInterceptor implements HandlerInterceptor {

	private final RequestRateLimiter limiter;

	private final MethodLimits methods;

	/**
	 * Creates an interceptor.
	 * @param limiter the request limiter
	 * @param methods finds annotated handlers
	 */
	public RateLimitHandlerInterceptor(RequestRateLimiter limiter, MethodLimits methods) {
		this.limiter = limiter;
		this.methods = methods;
	}

	@Override
	public boolean preHandle(HttpServletRequest request, HttpServletResponse response, Object handler)
			throws Exception {
		RequestLimits state = ServletRateLimitRequest.state(request);
		if (request.getDispatcherType() != DispatcherType.REQUEST || state == null || !state.hasDeferred()) {
			return true;
		}
		if (handler instanceof HandlerMethod method
				&& !this.methods.find(method.getMethod(), method.getBeanType()).isEmpty()) {
			return true;
		}
		List<Acquisition> acquisitions = this.limiter.takeDeferred(new ServletRateLimitRequest(request), state);
		return ServletRateLimitRequest.apply(this.limiter.decide(acquisitions, state), state, response, this.limiter);
	}

}
