package io.github.ratelimit.web;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;

import org.springframework.web.filter.OncePerRequestFilter;

import io.github.ratelimit.core.Acquisition;

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

	private final WebRateLimiter limiter;

	/**
	 * Creates a filter.
	 * @param limiter the web limiter
	 */
	public RateLimitFilter(WebRateLimiter limiter) {
		this.limiter = limiter;
	}

	@Override
	protected void doFilterInternal(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
			throws ServletException, IOException {
		List<RouteLimit> routes = this.limiter.matchRoutes(request);
		if (routes.isEmpty()) {
			chain.doFilter(request, response);
			return;
		}
		List<Acquisition> now = new ArrayList<>(routes.size());
		List<RouteLimit> deferred = new ArrayList<>(0);
		for (RouteLimit route : routes) {
			if (route.definition().needsPrincipal()) {
				deferred.add(route);
			}
			else {
				now.addAll(this.limiter.bindAll(route.definition(), request));
			}
		}
		if (!now.isEmpty() && !this.limiter.decide(now, request, response)) {
			return;
		}
		if (!deferred.isEmpty()) {
			this.limiter.defer(request, deferred);
		}
		chain.doFilter(request, response);
	}

}
