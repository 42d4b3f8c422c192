package io.github.ratelimit.internal.pipeline;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

import io.github.ratelimit.internal.core.RateLimiter;

/**
 * Settles a request once its outcome is known: gives back what limits that do not count
 * its final status consumed, the permits concurrency limits hold once its call is over,
 * and what stages that never began were granted when its client went away.
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

}
