package io.github.ratelimit.pipeline;

import java.util.ArrayList;
import java.util.List;

import io.github.ratelimit.core.Acquisition;
import io.github.ratelimit.core.RateLimitDecision;
import io.github.ratelimit.core.RateLimitResult;
import io.github.ratelimit.core.RateLimiter;

/**
 * What the stages limiting one request (route limits before authentication, then the
 * handler) have decided so far: decisions for the headers, what was consumed so that a
 * later rejection can give it back, and route limits waiting for the principal. A web
 * stack keeps one per request, as a request or exchange attribute named
 * {@link #ATTRIBUTE}. Stages of one request run one after another, never at once.
 */
public final class RequestLimits {

	/** Name of the request or exchange attribute holding the state. */
	public static final String ATTRIBUTE = RequestLimits.class.getName();

	private final List<RateLimitDecision> decisions = new ArrayList<>(2);

	private final List<Consumed> consumed = new ArrayList<>(2);

	private List<RouteLimit> deferred = List.of();

	/**
	 * Every decision made for the request so far, in order.
	 * @return the decisions
	 */
	public List<RateLimitDecision> decisions() {
		return this.decisions;
	}

	/**
	 * Whether route limits wait for the handler of the request.
	 * @return whether some are deferred
	 */
	public boolean hasDeferred() {
		return !this.deferred.isEmpty();
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
		giveBack(limiter, false);
	}

	/**
	 * Gives back like {@link #refundAll} without waiting for the store, for event loops:
	 * the refund completes in the background, and one the store fails is dropped (the
	 * store's observer counts the failure).
	 */
	void refundAllAsync(RateLimiter limiter) {
		giveBack(limiter, true);
	}

	private void giveBack(RateLimiter limiter, boolean async) {
		for (Consumed taken : this.consumed) {
			List<Acquisition> acquisition = List.of(taken.acquisition);
			if (async) {
				limiter.refundAsync(acquisition, taken.result);
			}
			else {
				limiter.refund(acquisition, taken.result);
			}
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

	private record Consumed(Acquisition acquisition, RateLimitResult result, int decision) {
	}

}
