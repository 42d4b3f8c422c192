package io.github.ratelimit.web;

import java.util.ArrayList;
import java.util.List;

import jakarta.servlet.http.HttpServletRequest;

import io.github.ratelimit.core.Acquisition;
import io.github.ratelimit.core.RateLimitDecision;
import io.github.ratelimit.core.RateLimitResult;
import io.github.ratelimit.core.RateLimiter;

/**
 * What the stages limiting one request (the filter before Spring Security, then the
 * handler) have decided so far: decisions for the headers, what was consumed so that a
 * later rejection can give it back, and route limits waiting for the principal.
 */
final class RequestLimitState {

	private static final String ATTRIBUTE = RequestLimitState.class.getName();

	private final List<RateLimitDecision> decisions = new ArrayList<>();

	private final List<Consumed> consumed = new ArrayList<>();

	private List<RouteLimit> deferred = List.of();

	static RequestLimitState get(HttpServletRequest request) {
		Object state = request.getAttribute(ATTRIBUTE);
		return (state instanceof RequestLimitState existing) ? existing : null;
	}

	static RequestLimitState getOrCreate(HttpServletRequest request) {
		RequestLimitState state = get(request);
		if (state == null) {
			state = new RequestLimitState();
			request.setAttribute(ATTRIBUTE, state);
		}
		return state;
	}

	List<RateLimitDecision> decisions() {
		return this.decisions;
	}

	/** Records a stage's decisions and, when admitted, what it consumed. */
	void record(List<Acquisition> acquisitions, RateLimitResult result) {
		int first = this.decisions.size();
		this.decisions.addAll(result.decisions());
		if (result.allowed()) {
			// only what was taken can be given back: a shadow limit that rejected took nothing
			for (int i = 0; i < acquisitions.size(); i++) {
				if (result.decisions().get(i).allowed()) {
					this.consumed.add(new Consumed(acquisitions.get(i), result, first + i));
				}
			}
		}
	}

	/** Gives back everything earlier stages consumed: a later stage rejected the request. */
	void refundAll(RateLimiter limiter) {
		for (Consumed taken : this.consumed) {
			limiter.refund(List.of(taken.acquisition), taken.result);
			this.decisions.set(taken.decision, this.decisions.get(taken.decision).uncommitted(taken.acquisition.cost()));
		}
		this.consumed.clear();
	}

	void defer(List<RouteLimit> routes) {
		this.deferred = routes;
	}

	List<RouteLimit> takeDeferred() {
		List<RouteLimit> taken = this.deferred;
		this.deferred = List.of();
		return taken;
	}

	boolean hasDeferred() {
		return !this.deferred.isEmpty();
	}

	private record Consumed(Acquisition acquisition, RateLimitResult result, int decision) {
	}

}
