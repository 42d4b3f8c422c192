package io.github.ratelimit.internal.pipeline;

import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

import io.github.ratelimit.internal.core.RateLimiter;
import io.github.ratelimit.store.Acquisition;
import io.github.ratelimit.store.RateLimitResult;

/**
 * Settles a request or a call once its outcome is known: gives back what limits that do
 * not count its final status ({@link CountedStatuses}) or its call's outcome
 * ({@link CallOutcomes}) consumed, the permits concurrency limits hold once its call is
 * over, and what stages that never began were granted when its client went away.
 */
public final class OutcomeSettlement {

	private static final CompletionStage<Void> DONE = CompletableFuture.completedFuture(null);

	private final RateLimiter limiter;

	/**
	 * Creates a settlement.
	 * @param limiter gives back
	 */
	public OutcomeSettlement(RateLimiter limiter) {
		this.limiter = limiter;
	}

	/**
	 * Gives back what limits that do not count the final status of a request consumed
	 * for it (see {@link RequestLimits#settle}). Called once the response status is final;
	 * refunds on the calling thread.
	 * @param state the request's state, or {@code null} when nothing limited it
	 * @param status the final response status
	 */
	public void settle(RequestLimits state, int status) {
		if (state != null) {
			state.settle(status, this.limiter);
		}
	}

	/**
	 * Gives back as {@link #settle} without blocking: for event loops.
	 * @param state the request's state, or {@code null} when nothing limited it
	 * @param status the final response status
	 * @return completes when the store has answered every refund (a failed refund is
	 * dropped, never an error)
	 */
	public CompletionStage<Void> settleAsync(RequestLimits state, int status) {
		return (state != null) ? state.settleAsync(status, this.limiter) : DONE;
	}

	/**
	 * Gives back as {@link #settleAsync} only what limits counting some statuses took,
	 * leaving the permits concurrency limits hold until the call is over.
	 * @param state the request's state, or {@code null} when nothing limited it
	 * @param status the final response status
	 * @return completes when the store has answered every refund
	 */
	public CompletionStage<Void> settleCountedAsync(RequestLimits state, int status) {
		return (state != null) ? state.settleCountedAsync(status, this.limiter) : DONE;
	}

	/**
	 * Gives back the permits concurrency limits hold for a request whose call is over.
	 * @param state the request's state, or {@code null} when nothing limited it
	 * @return completes when the store has answered every refund
	 */
	public CompletionStage<Void> releaseHeldAsync(RequestLimits state) {
		return (state != null) ? state.releaseHeldAsync(this.limiter) : DONE;
	}

	/**
	 * Handles a request whose client went away (a cancelled exchange), without waiting for
	 * the store: gives back only what a stage was granted that never began, including what
	 * a decision still under way grants later, and stops a stage waiting for a permit.
	 * Stages that began keep what they took (see {@link RequestLimits#abandon}).
	 * @param state the request's state
	 */
	public void abandon(RequestLimits state) {
		state.abandon(this.limiter);
	}

	/**
	 * Gives back what limits that do not count a call that threw took: the call of a bean
	 * method that is not a web handler.
	 * @param counted the limits of the call that count only some outcomes
	 * @param decided every acquisition of the call, in the order of the decision
	 * @param result the decision that admitted the call
	 * @param failure what the call threw
	 * @param async whether to give back without waiting for the store (a reactive call,
	 * maybe on an event loop)
	 * @return what was given back, which a cost settlement leaves alone
	 */
	public List<Acquisition> settleThrown(List<CountedCall> counted, List<Acquisition> decided, RateLimitResult result,
			Throwable failure, boolean async) {
		List<Acquisition> refunded = List.of();
		for (CountedCall call : counted) {
			if (!call.outcomes().countsThrown(failure)) {
				refunded = refundQuietly(admitted(call.acquisitions(), decided, result), result, async, refunded);
			}
		}
		return refunded;
	}

	/**
	 * Gives back what limits that do not count a call that returned a value took. A
	 * condition that cannot be evaluated keeps the charge: failing safe is counting.
	 * @param counted the limits of the call that count only some outcomes
	 * @param decided every acquisition of the call, in the order of the decision
	 * @param result the decision that admitted the call
	 * @param method the invoked method
	 * @param args its arguments
	 * @param value what it returned (for a {@code Mono}, the value it emitted)
	 * @param async whether to give back without waiting for the store
	 * @return what was given back, which a cost settlement leaves alone
	 */
	public List<Acquisition> settleReturned(List<CountedCall> counted, List<Acquisition> decided, RateLimitResult result,
			Method method, Object[] args, Object value, boolean async) {
		List<Acquisition> refunded = List.of();
		for (CountedCall call : counted) {
			boolean counts;
			try {
				counts = call.outcomes().countsReturned(method, args, value);
			}
			catch (RuntimeException ex) {
				counts = true;
			}
			if (!counts) {
				refunded = refundQuietly(admitted(call.acquisitions(), decided, result), result, async, refunded);
			}
		}
		return refunded;
	}

	/**
	 * The acquisitions a decision admitted, which alone took something to give back: a
	 * shadow limit (a candidate) that rejected took nothing.
	 * @param acquisitions the acquisitions of a call
	 * @param result the decision, one per acquisition in order
	 * @return those admitted
	 */
	public static List<Acquisition> admitted(List<Acquisition> acquisitions, RateLimitResult result) {
		return admitted(acquisitions, acquisitions, result);
	}

	/**
	 * The acquisitions among {@code some} of {@code all} (decided in that order) that were
	 * admitted.
	 * @param some the acquisitions of some limits of a call
	 * @param all every acquisition of the call, in the order of the decision
	 * @param result the decision, one per acquisition of {@code all} in order
	 * @return those of {@code some} admitted
	 */
	static List<Acquisition> admitted(List<Acquisition> some, List<Acquisition> all, RateLimitResult result) {
		List<Acquisition> admitted = new ArrayList<>(some.size());
		for (Acquisition acquisition : some) {
			for (int i = 0; i < all.size() && i < result.decisions().size(); i++) {
				if (all.get(i) == acquisition) {
					if (result.decisions().get(i).allowed()) {
						admitted.add(acquisition);
					}
					break;
				}
			}
		}
		return admitted;
	}

	/** Gives back, and adds what it gave back to {@code refunded}. */
	private List<Acquisition> refundQuietly(List<Acquisition> acquisitions, RateLimitResult result, boolean async,
			List<Acquisition> refunded) {
		if (acquisitions.isEmpty()) {
			return refunded;
		}
		List<Acquisition> given = new ArrayList<>(refunded);
		given.addAll(acquisitions);
		if (async) {
			// completes in the background; a refund the store fails is dropped and counted
			this.limiter.refundAsync(acquisitions, result);
			return given;
		}
		try {
			this.limiter.refund(acquisitions, result);
		}
		catch (RuntimeException ex) {
			// the call's own outcome stands; the store logs and counts its failures
		}
		return given;
	}

	/**
	 * The acquisitions of one limit that counts only some outcomes of a call.
	 *
	 * @param acquisitions the limit's acquisitions (with its candidate's)
	 * @param outcomes the outcomes that count
	 */
	public record CountedCall(List<Acquisition> acquisitions, CallOutcomes outcomes) {

		public CountedCall {
			acquisitions = List.copyOf(acquisitions);
		}

	}

}
