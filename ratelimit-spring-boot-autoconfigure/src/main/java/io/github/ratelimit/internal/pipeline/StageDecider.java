package io.github.ratelimit.internal.pipeline;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;

import io.github.ratelimit.RateLimitUnavailableException;
import io.github.ratelimit.internal.core.RateLimiter;
import io.github.ratelimit.internal.core.ReleaseWait;
import io.github.ratelimit.store.Acquisition;
import io.github.ratelimit.store.MutableDecision;
import io.github.ratelimit.store.RateLimit;
import io.github.ratelimit.store.RateLimitDecision;
import io.github.ratelimit.store.RateLimitResult;

/**
 * Decides the stages of a request all-or-nothing across stages: records what each
 * admitted stage consumed, and a rejection gives back what earlier stages took. A stage
 * decided on an event loop never waits for the store, and one that may wait for a permit
 * tries again on a timer rather than a waiting thread.
 */
public final class StageDecider {

	private final RateLimiter limiter;

	private final VerdictRenderer renderer;

	/**
	 * Where the store writes a stage decided in place, per thread: the request's state
	 * keeps what it says, so the decision object is never the request's own.
	 */
	private final ThreadLocal<MutableDecision> inPlace = ThreadLocal.withInitial(MutableDecision::new);

	/**
	 * Creates a decider.
	 * @param limiter decides
	 * @param renderer renders the answer of a rejected stage
	 */
	public StageDecider(RateLimiter limiter, VerdictRenderer renderer) {
		this.limiter = limiter;
		this.renderer = renderer;
	}

	/**
	 * Decides one stage of a request on the calling thread. Admitted: records it. Rejected:
	 * gives back what earlier stages consumed and renders the {@code 429}, or the
	 * {@code 503} of fail-closed limits whose store is down.
	 * @param acquisitions the acquisitions of this stage
	 * @param state the request's state
	 * @return the verdict
	 */
	public Verdict decide(List<Acquisition> acquisitions, RequestLimits state) {
		RateLimitResult result;
		try {
			result = this.limiter.acquire(acquisitions);
		}
		catch (RateLimitUnavailableException ex) {
			return new Verdict(this.renderer.unavailable(state, ex), 0);
		}
		return verdict(acquisitions, result, state);
	}

	/**
	 * Decides the first stage of a request, of one limit for one identity, on the calling
	 * thread, as {@link #decide} decides it: the store writes the decision into this
	 * thread's decision object, and the state keeps what an admitting one says, allocating
	 * nothing. A stage that is not admitted (or only by a shadow limit) goes on as a list
	 * of one.
	 * @param limit the limit
	 * @param identity the identity
	 * @param cost the cost
	 * @param state the request's state, with nothing recorded yet
	 * @return the verdict
	 */
	Verdict decideSingle(RateLimit limit, String identity, long cost, RequestLimits state) {
		MutableDecision decision = this.inPlace.get();
		try {
			this.limiter.acquire(limit, identity, cost, 0, decision);
		}
		catch (RateLimitUnavailableException ex) {
			return new Verdict(this.renderer.unavailable(state, ex), 0);
		}
		if (!decision.allowed()) {
			return verdict(List.of(new Acquisition(limit, identity, cost)), decision.toResult(), state, false, null);
		}
		state.recordSingle(decision, identity, cost);
		long delay = decision.delayMicros();
		return (delay > 0 && !limit.shadow()) ? new Verdict(null, delay) : Verdict.PROCEED;
	}

	/**
	 * Decides the first stage of a request that keeps no state, of one limit for one
	 * identity, on the calling thread: as {@link #decideSingle}, with the headers of a
	 * stage that proceeds written at once from this thread's decision object, so that an
	 * admitted request allocates nothing. A stage that is not admitted (or only by a
	 * shadow limit) is recorded in a state of its own, for its answer.
	 * @param limit the limit
	 * @param identity the identity
	 * @param cost the cost
	 * @param headers receives the headers of a stage that proceeds
	 * @return the verdict
	 */
	Verdict decideAlone(RateLimit limit, String identity, long cost, RateLimitResponses.HeaderSink headers) {
		MutableDecision decision = this.inPlace.get();
		try {
			this.limiter.acquire(limit, identity, cost, 0, decision);
		}
		catch (RateLimitUnavailableException ex) {
			return new Verdict(this.renderer.unavailable(null, ex), 0);
		}
		if (!decision.allowed()) {
			RequestLimits state = new RequestLimits();
			// a route limit settles nothing (routes refuse settling policies): no costs to keep
			Verdict verdict = verdict(List.of(new Acquisition(limit, identity, cost)), decision.toResult(), state,
					false, null);
			if (verdict.proceeds()) {
				this.renderer.writeHeaders(state, headers);
			}
			return verdict;
		}
		this.renderer.writeHeaders(decision, headers);
		long delay = decision.delayMicros();
		return (delay > 0 && !limit.shadow()) ? new Verdict(null, delay) : Verdict.PROCEED;
	}

	/**
	 * Decides one stage of a request without holding the calling thread, for event
	 * loops; otherwise as {@link #decide}. With a wait, token and leaky buckets reserve a
	 * slot up to {@code maxWaitMicros} ahead (the verdict's delay), and a stage the
	 * window algorithms reject is tried again after its retry-after while that stays
	 * within the wait, on a timer rather than a waiting thread.
	 * @param acquisitions the acquisitions of this stage
	 * @param state the request's state
	 * @param maxWaitMicros longest wait for a permit; 0 never waits
	 * @return the verdict
	 */
	public CompletionStage<Verdict> decideAsync(List<Acquisition> acquisitions, RequestLimits state,
			long maxWaitMicros) {
		return decideAsync(acquisitions, state, maxWaitMicros, null);
	}

	/**
	 * Decides like {@link #decideAsync(List, RequestLimits, long)}, telling the request's
	 * costs which decision admitted the limits that settle.
	 * @param acquisitions the acquisitions of this stage
	 * @param state the request's state
	 * @param maxWaitMicros longest wait for a permit; 0 never waits
	 * @param costs the request's costs, or {@code null} when nothing settles
	 * @return the verdict
	 */
	public CompletionStage<Verdict> decideAsync(List<Acquisition> acquisitions, RequestLimits state,
			long maxWaitMicros, RequestCosts costs) {
		// the clock matters only to a stage that may wait
		long deadline = (maxWaitMicros > 0) ? System.nanoTime() + TimeUnit.MICROSECONDS.toNanos(maxWaitMicros) : 0;
		return attempt(acquisitions, state, maxWaitMicros, deadline, costs);
	}

	private CompletionStage<Verdict> attempt(List<Acquisition> acquisitions, RequestLimits state,
			long maxWaitMicros, long deadline, RequestCosts costs) {
		long left = (maxWaitMicros > 0) ? Math.max(0, TimeUnit.NANOSECONDS.toMicros(deadline - System.nanoTime())) : 0;
		// watched before deciding, so that a release right after the rejection is not missed
		ReleaseWait release = (maxWaitMicros > 0) ? this.limiter.watchReleases(acquisitions) : null;
		CompletableFuture<RateLimitResult> decided = this.limiter.acquireAsync(acquisitions, left)
			.toCompletableFuture();
		if (release == null && decided.isDone() && !decided.isCompletedExceptionally()) {
			// decided on the calling thread (the in-memory store): answered at once unless a
			// rejection may be tried again within the wait
			RateLimitResult result = decided.join();
			if (maxWaitMicros == 0 || result.allowed()) {
				return CompletableFuture.completedFuture(verdict(acquisitions, result, state, true, costs));
			}
		}
		return decided.handle((result, failure) -> {
			long retryAfter = (failure == null) ? retryAfterMicros(result) : 0;
			boolean retrying = failure == null && !result.allowed() && retryAfter > 0 && retryAfter <= left
					&& !state.abandoned();
			if (release != null && !retrying) {
				release.close();
			}
			if (failure != null) {
				Throwable cause = (failure instanceof CompletionException && failure.getCause() != null)
						? failure.getCause() : failure;
				if (cause instanceof RateLimitUnavailableException unavailable) {
					return CompletableFuture
						.completedFuture(new Verdict(this.renderer.unavailableAsync(state, unavailable), 0));
				}
				return CompletableFuture.<Verdict>failedFuture(cause);
			}
			if (retrying) {
				// rejected stages consume nothing: try again once the quota is back
				Executor timer = CompletableFuture.delayedExecutor(retryAfter, TimeUnit.MICROSECONDS);
				CompletableFuture<Object> retry = CompletableFuture.supplyAsync(() -> null, timer);
				if (release == null) {
					return retry.thenCompose((ignored) -> attempt(acquisitions, state, maxWaitMicros, deadline, costs));
				}
				// a concurrency limit's waiter tries again as soon as a call gives its permit back
				return CompletableFuture.anyOf(retry, release.released()).thenComposeAsync((ignored) -> {
					release.close();
					return attempt(acquisitions, state, maxWaitMicros, deadline, costs);
				});
			}
			return CompletableFuture.completedFuture(verdict(acquisitions, result, state, true, costs));
		}).thenCompose((next) -> next);
	}

	private static long retryAfterMicros(RateLimitResult result) {
		long retryAfter = 0;
		for (RateLimitDecision decision : result.decisions()) {
			if (decision.rejects()) {
				retryAfter = Math.max(retryAfter, decision.retryAfterMicros());
			}
		}
		return retryAfter;
	}

	/**
	 * What a decided stage comes to: records it, and on rejection gives back what earlier
	 * stages consumed and renders the {@code 429}.
	 * @param acquisitions the acquisitions of the stage
	 * @param result their decisions
	 * @param state the request's state
	 * @return the verdict
	 */
	public Verdict verdict(List<Acquisition> acquisitions, RateLimitResult result, RequestLimits state) {
		return verdict(acquisitions, result, state, false, null);
	}

	/**
	 * Carries out a decision; refunds {@code async} never wait for the store, since the
	 * thread may be an event loop (the reply may complete before a continuation is
	 * attached, which then runs on the thread that asked).
	 */
	private Verdict verdict(List<Acquisition> acquisitions, RateLimitResult result, RequestLimits state,
			boolean async, RequestCosts costs) {
		state.record(acquisitions, result);
		if (costs != null) {
			// what settles once the response is final: the admitted limits, or nothing
			if (result.allowed()) {
				costs.admitted(acquisitions, result);
			}
			else {
				costs.rejected(true);
			}
		}
		if (async && result.allowed() && state.abandoned()) {
			// the client went away while the store decided: this stage never begins, so what
			// it was granted goes back; what earlier stages began with stays taken
			state.abandon(this.limiter);
			return new Verdict(this.renderer.rejection(state), 0);
		}
		if (!result.allowed()) {
			if (async) {
				state.refundAllAsync(this.limiter);
			}
			else {
				state.refundAll(this.limiter);
			}
			return new Verdict(this.renderer.rejection(state), 0);
		}
		return (result.delayMicros() > 0) ? new Verdict(null, result.delayMicros()) : Verdict.PROCEED;
	}

	/**
	 * Records an admitted stage decided elsewhere (by the method interceptor of a handler).
	 * @param acquisitions what was acquired
	 * @param result the decisions
	 * @param state the request's state
	 */
	public void allowed(List<Acquisition> acquisitions, RateLimitResult result, RequestLimits state) {
		state.record(acquisitions, result);
	}

	/**
	 * Records a rejected stage decided elsewhere and, when asked, gives back what earlier
	 * stages consumed.
	 * @param result the decisions
	 * @param state the request's state
	 * @param refundEarlierStages whether the earlier stages are given back
	 */
	public void rejected(RateLimitResult result, RequestLimits state, boolean refundEarlierStages) {
		state.record(List.of(), result);
		if (refundEarlierStages) {
			state.refundAll(this.limiter);
		}
	}

}
