package io.github.ratelimit.internal.web;

import java.io.IOException;
import java.util.List;

import jakarta.servlet.AsyncEvent;
import jakarta.servlet.AsyncListener;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;

import org.springframework.web.filter.OncePerRequestFilter;

import io.github.ratelimit.internal.pipeline.RequestCosts;
import io.github.ratelimit.internal.pipeline.RequestLimits;
import io.github.ratelimit.internal.pipeline.RequestRateLimiter;
import io.github.ratelimit.internal.pipeline.RouteLimit;
import io.github.ratelimit.internal.pipeline.Verdict;

/**
 * Enforces {@code ratelimit.routes}. Runs before Spring Security, so route limits keyed on
 * the client IP, a tenant or nothing also hold for requests Spring Security answers
 * itself (form login, failed authentication). Route limits keyed on the principal wait
 * for the handler, after authentication, and are decided there together with the
 * handler's own limits.
 * <p>
 * Once the response status is final (when the chain returns, or when an asynchronous
 * request completes), limits that count only some statuses are given back what they
 * consumed for a request answered otherwise. Actual costs settle then too: a streamed
 * response (a {@code ResponseBodyEmitter}, {@code SseEmitter} or
 * {@code StreamingResponseBody}) settles once it has ended, from what its handler reported
 * while it streamed.
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
		if (this.limiter.hasRoutes()) {
			ServletRateLimitRequest view = new ServletRateLimitRequest(request);
			List<RouteLimit> matched = this.limiter.matchRoutes(view);
			// a request no route matches gets no state: nothing to record, settle or give back
			if (!matched.isEmpty() && !limitRouteStage(view, matched, request, response)) {
				return;
			}
		}
		boolean completed = false;
		try {
			chain.doFilter(request, response);
			completed = true;
		}
		finally {
			settle(request, response, completed);
		}
	}

	/** Decides the route stage of a request and carries out its verdict; whether it may proceed. */
	private boolean limitRouteStage(ServletRateLimitRequest view, List<RouteLimit> matched,
			HttpServletRequest request, HttpServletResponse response) throws IOException {
		if (ServletRateLimitRequest.state(request) == null && this.limiter.decidesAlone(matched)) {
			// nothing follows the stage: the request keeps no state, and the headers are written now
			Verdict verdict = this.limiter.decideAlone(view, matched.get(0),
					(name, value) -> ServletRateLimitRequest.setHeader(response, name, value.toString()));
			return ServletRateLimitRequest.applyWritten(verdict, response);
		}
		RequestLimits state = ServletRateLimitRequest.stateOrCreate(request);
		Verdict verdict = this.limiter.decideRouteStage(view, matched, state);
		return verdict == null || ServletRateLimitRequest.apply(verdict, state, response, this.limiter);
	}

	/**
	 * Gives back what limits that do not count the final status consumed: now, or when an
	 * asynchronous request completes. An exception escaping the chain becomes a 500.
	 */
	private void settle(HttpServletRequest request, HttpServletResponse response, boolean completed) {
		RequestLimits state = ServletRateLimitRequest.state(request);
		RequestCosts costs = ServletRateLimitRequest.costs(request);
		if ((state == null || !state.countsByStatus()) && (costs == null || !costs.settles())) {
			return;
		}
		if (completed && request.isAsyncStarted()) {
			request.getAsyncContext().addListener(new AsyncListener() {

				@Override
				public void onComplete(AsyncEvent event) {
					HttpServletResponse completedResponse = (event.getSuppliedResponse() instanceof HttpServletResponse supplied)
							? supplied : response;
					settleNow(state, costs, completedResponse, completedResponse.getStatus());
				}

				@Override
				public void onTimeout(AsyncEvent event) {
					settleEnded(costs);
				}

				@Override
				public void onError(AsyncEvent event) {
					// a stream that failed or lost its client: what it reported so far, if anything
					settleEnded(costs);
				}

				@Override
				public void onStartAsync(AsyncEvent event) {
					// a new asynchronous cycle: listen to it too
					event.getAsyncContext().addListener(this);
				}

			});
			return;
		}
		settleNow(state, costs, response, completed ? response.getStatus() : HttpServletResponse.SC_INTERNAL_SERVER_ERROR);
	}

	/**
	 * Settles the actual cost of an asynchronous request that ended before its response was
	 * complete: what its handler reported so far; its completion, which follows, settles
	 * nothing more.
	 */
	private void settleEnded(RequestCosts costs) {
		if (costs != null) {
			costs.settleEnded(this.limiter.costs(), false);
		}
	}

	/** Gives back what the final status does not count, and settles actual costs. */
	private void settleNow(RequestLimits state, RequestCosts costs, HttpServletResponse response, int status) {
		this.limiter.settle(state, status);
		this.limiter.settleCosts(costs, status, response::getHeader, false);
	}

}
