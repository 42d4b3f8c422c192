package io.github.ratelimit.web;

import java.io.IOException;
import java.util.List;

import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;

import org.springframework.web.filter.OncePerRequestFilter;

import io.github.ratelimit.core.Acquisition;
import io.github.ratelimit.pipeline.RequestLimits;
import io.github.ratelimit.pipeline.RequestRateLimiter;

/**
 * Enforces {@code ratelimit.routes}. Runs before Spring Security, so route limits keyed on
 * the client IP, a tenant or nothing also hold for requests Spring Security answers
 * itself (form login, failed authentication). Route limits keyed on the principal wait
 * for the handler, after authentication, and are decided there together with the
 * handler's own limits.
 */
public class RateLimitFilter extends OncePerRequestFilter {

	/** Default order: just before Spring Security's filter chain (order -100). */
	public static final int DEFAULT_ORDER = -110;

	private final RequestRateLimiter limiter;

	/**
	 * Creates a filter.
	 * @param limiter the request limiter
	 */
	public RateLimitFilter(RequestRateLimiter limiter) {
		this.limiter = limiter;
	}

	@Override
	protected void doFilterInternal(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
			throws ServletException, IOException {
		if (!this.limiter.hasRoutes()) {
			chain.doFilter(request, response);
			return;
		}
		ServletRateLimitRequest view = new ServletRateLimitRequest(request);
		RequestLimits state = ServletRateLimitRequest.stateOrCreate(request);
		List<Acquisition> now = this.limiter.routeStage(view, state);
		if (!now.isEmpty() && !ServletRateLimitRequest.apply(this.limiter.decide(now, state), state, response, this.limiter)) {
			return;
		}
		chain.doFilter(request, response);
	}

}
