package io.github.ratelimit.internal.pipeline;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

import io.github.ratelimit.internal.core.CountedOutcomes;
import io.github.ratelimit.internal.core.RateLimiter;
import io.github.ratelimit.store.Acquisition;
import io.github.ratelimit.store.MutableDecision;
import io.github.ratelimit.store.RateLimit;
import io.github.ratelimit.store.RateLimitDecision;
import io.github.ratelimit.store.RateLimitResult;
import io.github.ratelimit.store.RateLimitStore;

/**
 * What the stages limiting one request (route limits before authentication, then the
 * handler) have decided so far: decisions for the headers, what was consumed so that a
 * later rejection can give it back, and route limits waiting for the principal. A web
 * stack keeps one per request, as a request or exchange attribute named
 * {@link #ATTRIBUTE}. Stages of one request run one after another, never at once.
 * <p>
 * Limits that count only some final statuses are given back what they consumed by
 * {@link #settle} once the response status is final. A client going away is no refund:
 * once a stage's request goes on ({@link #begin}), {@link #abandon} keeps what it took.
 * <p>
 * The usual request has one stage with one limit that admits it: what that stage's
 * decision says is kept in fields ({@link #keptInPlace()}), and its decision, acquisition
 * and result become values only when something asks for them (a later stage, a refund, a
 * settlement), so that such a request allocates nothing but this state.
 */
public final class RequestLimits {

	/** Name of the request or exchange attribute holding the state. */
	public static final String ATTRIBUTE = RequestLimits.class.getName();

	private static final CompletionStage<Void> DONE = CompletableFuture.completedFuture(null);

	/**
	 * The decisions so far: the first stage's own (immutable) list, until a second stage
	 * or a refund needs a list of this state's own. Volatile: {@link #decisions()} reads it
	 * without the lock, and a refund on another thread (a cancelled exchange) may replace
	 * it with a copy meanwhile.
	 */
	private volatile List<RateLimitDecision> decisions = List.of();

	private boolean ownsDecisions;

	/** What admitted stages consumed; created with the first. */
	private List<Consumed> consumed = List.of();

	/**
	 * How many of {@link #consumed}, from the first, belong to stages whose request went on
	 * ({@link #begin}): what they admitted has started, so a client going away keeps them.
	 */
	private int begun;

	private List<RouteLimit> deferred = List.of();

	/** The statuses the acquisitions of limits that do not count every answer count, by instance. */
	private Map<Acquisition, CountedOutcomes> counting;

	private boolean countsByStatus;

	private boolean abandoned;

	/**
	 * The limit of the first stage's one admitted decision, kept as the store wrote it and
	 * not yet a value ({@link #materialize}); {@code null} otherwise. Volatile as
	 * {@link #decisions}; the fields below are that decision's, written before it.
	 */
	private volatile RateLimit single;

	private long singleRemaining;

	private long singleResetMicros;

	private long singleDelayMicros;

	private long singleWindowMicros;

	private long singleTimestampMicros;

	private String singleStore;

	private RateLimitStore singleRefundTo;

	private String singleIdentity;

	private long singleCost;

	/**
	 * Every decision made for the request so far, in order.
	 * @return the decisions
	 */
	public List<RateLimitDecision> decisions() {
		if (this.single != null) {
			materialize();
		}
		return this.decisions;
	}

	/**
	 * Whether the first stage's one admitted decision is all that was decided for the
	 * request, kept as the store wrote it: headers are written from it without values.
	 * @return whether it is kept so
	 */
	boolean keptInPlace() {
		return this.single != null;
	}

	/**
	 * Writes the headers of the decision kept in place.
	 * @param responses renders them
	 * @param headers receives each header
	 * @return {@code false} when no decision is kept in place, and nothing was written
	 */
	boolean writeKeptHeaders(RateLimitResponses responses, RateLimitResponses.HeaderSink headers) {
		RateLimit limit = this.single;
		if (limit == null) {
			return false;
		}
		responses.headers(limit, this.singleRemaining, this.singleResetMicros, this.singleWindowMicros, headers);
		return true;
	}

	/**
	 * Whether no stage has recorded anything for the request yet.
	 * @return whether it is new
	 */
	boolean isEmpty() {
		return this.single == null && this.decisions.isEmpty();
	}

	/**
	 * Records the first stage of a request, decided in place for one limit that admitted
	 * it and counts every status: the state keeps what the decision says, not the decision.
	 * Without the lock: the state is new, and the fields are published by the volatile
	 * write of {@link #single}, which every reader takes first.
	 * @param decision the admitting decision, read here only
	 * @param identity the identity it was decided for
	 * @param cost what it consumed
	 */
	void recordSingle(MutableDecision decision, String identity, long cost) {
		this.singleRemaining = decision.remaining();
		this.singleResetMicros = decision.resetMicros();
		this.singleDelayMicros = decision.delayMicros();
		this.singleWindowMicros = decision.windowMicros();
		this.singleTimestampMicros = decision.timestampMicros();
		this.singleStore = decision.store();
		this.singleRefundTo = decision.refundTo();
		this.singleIdentity = identity;
		this.singleCost = cost;
		this.single = decision.limit();
	}

	/**
	 * Turns the first stage kept in place into the values the other paths work on: its
	 * decision, and what it consumed. Every change of the state starts with it.
	 */
	private synchronized void materialize() {
		RateLimit limit = this.single;
		if (limit == null) {
			return;
		}
		RateLimitDecision decision = new RateLimitDecision(limit, true, this.singleRemaining, this.singleResetMicros, 0,
				this.singleDelayMicros, this.singleWindowMicros);
		RateLimitResult result = new RateLimitResult(List.of(decision), this.singleTimestampMicros, this.singleStore,
				this.singleRefundTo);
		List<Consumed> taken = new ArrayList<>(2);
		taken.add(new Consumed(new Acquisition(limit, this.singleIdentity, this.singleCost), result, 0,
				CountedOutcomes.ALL));
		taken.addAll(this.consumed);
		this.consumed = taken;
		this.decisions = result.decisions();
		this.ownsDecisions = false;
		this.single = null;
	}

	/**
	 * Whether route limits wait for the handler of the request.
	 * @return whether some are deferred
	 */
	public boolean hasDeferred() {
		return !this.deferred.isEmpty();
	}

	/**
	 * Says which final statuses count for acquisitions about to be decided for the
	 * request; acquisitions never named here count whatever the status.
	 * @param acquisitions the acquisitions of one limit (and its candidate)
	 * @param statuses the statuses that count for them
	 */
	public void countOnly(List<Acquisition> acquisitions, CountedOutcomes statuses) {
		if (statuses.countsAll() || acquisitions.isEmpty()) {
			return;
		}
		if (this.counting == null) {
			this.counting = new IdentityHashMap<>(4);
		}
		for (Acquisition acquisition : acquisitions) {
			this.counting.put(acquisition, statuses);
		}
	}

	/**
	 * Whether something consumed for the request counts only for some final statuses,
	 * so that {@link #settle} has work to do.
	 * @return whether the request must be settled when its response is final
	 */
	public boolean countsByStatus() {
		return this.countsByStatus;
	}

	/**
	 * Gives back what limits that do not count the final status consumed, once; the
	 * response's status is final and no stage follows. A refund the store fails is
	 * dropped (the store and the observers count it as for any refund).
	 * @param status the final response status
	 * @param limiter gives back
	 * @return how many acquisitions were given back
	 */
	public int settle(int status, RateLimiter limiter) {
		List<Consumed> taken = takeSettlement();
		if (taken == null) {
			return 0;
		}
		int refunded = 0;
		for (Consumed consumed : taken) {
			if (!consumed.statuses.counts(status)) {
				refunded++;
				try {
					limiter.refund(List.of(consumed.acquisition), consumed.result);
				}
				catch (RuntimeException ex) {
					// a store that fails to give back is logged and counted by the store; the answer stands
					refunded--;
				}
			}
		}
		return refunded;
	}

	/**
	 * Gives back like {@link #settle(int, RateLimiter)} without waiting for the store, for
	 * event loops: the refunds complete in the background, and one the store fails is
	 * dropped (the store and the observers count it).
	 * @param status the final response status
	 * @param limiter gives back
	 * @return completes when every refund has (whether or not the store took it)
	 */
	public CompletionStage<Void> settleAsync(int status, RateLimiter limiter) {
		return settleAsync(status, limiter, true, true);
	}

	/**
	 * Gives back like {@link #settleAsync(int, RateLimiter)} only what limits counting some
	 * statuses took, leaving the permits concurrency limits hold: a response still
	 * streaming its body is still in flight, though its status is final.
	 * @param status the final response status
	 * @param limiter gives back
	 * @return completes when every refund has (whether or not the store took it)
	 */
	public CompletionStage<Void> settleCountedAsync(int status, RateLimiter limiter) {
		return settleAsync(status, limiter, true, false);
	}

	/**
	 * Gives back, without waiting for the store, only the permits concurrency limits hold
	 * for the request: its call is over.
	 * @param limiter gives back
	 * @return completes when every refund has (whether or not the store took it)
	 */
	public CompletionStage<Void> releaseHeldAsync(RateLimiter limiter) {
		return settleAsync(0, limiter, false, true);
	}

	private CompletionStage<Void> settleAsync(int status, RateLimiter limiter, boolean counted, boolean held) {
		List<Consumed> taken = takeSettlement(counted, held);
		if (taken == null) {
			return DONE;
		}
		CompletableFuture<?>[] refunds = new CompletableFuture<?>[taken.size()];
		int n = 0;
		for (Consumed consumed : taken) {
			if (!consumed.statuses.counts(status)) {
				refunds[n++] = limiter.refundAsync(List.of(consumed.acquisition), consumed.result)
					.toCompletableFuture()
					.exceptionally((failure) -> null);
			}
		}
		return (n == 0) ? DONE : CompletableFuture.allOf(Arrays.copyOf(refunds, n));
	}

	/**
	 * Takes what a settlement gives back, once: the response commit and the end of the
	 * exchange (or a cancellation) may both try, on different threads.
	 */
	private synchronized List<Consumed> takeSettlement() {
		return takeSettlement(true, true);
	}

	/**
	 * Takes what limits counting some statuses took ({@code counted}) and what concurrency
	 * limits hold ({@code held}), once each; keeps the rest for a later settlement.
	 */
	private synchronized List<Consumed> takeSettlement(boolean counted, boolean held) {
		if (!this.countsByStatus) {
			return null;
		}
		materialize();
		List<Consumed> taken = new ArrayList<>(this.consumed.size());
		List<Consumed> kept = new ArrayList<>(0);
		boolean stillSettling = false;
		int begun = 0;
		for (int i = 0; i < this.consumed.size(); i++) {
			Consumed consumed = this.consumed.get(i);
			if ((consumed.statuses == CountedOutcomes.NONE) ? held : counted) {
				taken.add(consumed);
			}
			else {
				kept.add(consumed);
				stillSettling |= !consumed.statuses.countsAll();
				begun += (i < this.begun) ? 1 : 0;
			}
		}
		this.consumed = kept;
		this.begun = begun;
		this.countsByStatus = stillSettling;
		return taken;
	}

	/**
	 * Marks what the stages admitted so far consumed as in use: the request goes on to
	 * what they admitted (the rest of the filter chain, the handler), which may start work
	 * nobody can stop, such as a password check or a blocking call on another thread. From
	 * here a client going away gives none of it back.
	 * @return {@code false} when the client went away first: what the stages consumed was
	 * given back, and the request must not go on
	 */
	public synchronized boolean begin() {
		if (this.abandoned) {
			return false;
		}
		// a stage kept in place is the first consumed, once it is a value
		this.begun = this.consumed.size() + ((this.single != null) ? 1 : 0);
		return true;
	}

	/**
	 * Handles a request whose client went away before it was answered, without waiting
	 * for the store: gives back what a stage consumed that never began (its decision
	 * arrived, or arrives later, but the request did not go on), and makes a stage still
	 * waiting for a permit stop. What stages that began consumed is kept: their work may
	 * still be running. Limits counting some statuses therefore count the request (its
	 * status is never known), and concurrency permits are held until their lease expires,
	 * since nothing says when the work they admitted stops.
	 * @param limiter gives back
	 */
	public void abandon(RateLimiter limiter) {
		materialize();
		List<Consumed> taken;
		synchronized (this) {
			this.abandoned = true;
			if (this.consumed.size() == this.begun) {
				return;
			}
			List<Consumed> kept = new ArrayList<>(this.consumed.subList(0, this.begun));
			taken = new ArrayList<>(this.consumed.subList(this.begun, this.consumed.size()));
			this.consumed = kept;
			this.countsByStatus = false;
			for (Consumed consumed : kept) {
				this.countsByStatus |= !consumed.statuses.countsAll();
			}
			uncommit(taken);
		}
		refund(taken, limiter, true);
	}

	/**
	 * Whether the request's client went away ({@link #abandon}).
	 * @return whether it was abandoned
	 */
	synchronized boolean abandoned() {
		return this.abandoned;
	}

	/** Records a stage's decisions and, when admitted, what it consumed. */
	synchronized void record(List<Acquisition> acquisitions, RateLimitResult result) {
		materialize();
		int first = this.decisions.size();
		List<RateLimitDecision> decided = result.decisions();
		if (first == 0) {
			// the usual request has one stage: its decisions need no copy
			this.decisions = decided;
			this.ownsDecisions = false;
		}
		else {
			// add by add: addAll copies the list into an array first
			List<RateLimitDecision> own = ownDecisions();
			for (int i = 0; i < decided.size(); i++) {
				own.add(decided.get(i));
			}
		}
		if (result.allowed()) {
			// only what was taken can be given back: a shadow limit that rejected took nothing
			for (int i = 0; i < acquisitions.size(); i++) {
				if (result.decisions().get(i).allowed()) {
					Acquisition acquisition = acquisitions.get(i);
					CountedOutcomes statuses = (this.counting != null) ? this.counting.remove(acquisition) : null;
					statuses = (statuses != null) ? statuses : CountedOutcomes.ALL;
					this.countsByStatus |= !statuses.countsAll();
					if (this.consumed.isEmpty()) {
						this.consumed = new ArrayList<>(2);
					}
					this.consumed.add(new Consumed(acquisition, result, first + i, statuses));
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
		materialize();
		List<Consumed> taken;
		synchronized (this) {
			taken = this.consumed;
			this.consumed = List.of();
			this.begun = 0;
			this.countsByStatus = false;
			uncommit(taken);
		}
		refund(taken, limiter, async);
	}

	/** Shows what is given back in the decisions the headers are written from. */
	private void uncommit(List<Consumed> taken) {
		List<RateLimitDecision> own = taken.isEmpty() ? this.decisions : ownDecisions();
		for (Consumed consumed : taken) {
			own.set(consumed.decision, own.get(consumed.decision).uncommitted(consumed.acquisition.cost()));
		}
	}

	private static void refund(List<Consumed> taken, RateLimiter limiter, boolean async) {
		for (Consumed consumed : taken) {
			List<Acquisition> acquisition = List.of(consumed.acquisition);
			if (async) {
				limiter.refundAsync(acquisition, consumed.result);
			}
			else {
				limiter.refund(acquisition, consumed.result);
			}
		}
	}

	/** The decisions as a list of this state's own, which a later stage or a refund may change. */
	private List<RateLimitDecision> ownDecisions() {
		if (!this.ownsDecisions) {
			this.decisions = new ArrayList<>(this.decisions);
			this.ownsDecisions = true;
		}
		return this.decisions;
	}

	void defer(List<RouteLimit> routes) {
		this.deferred = routes;
	}

	List<RouteLimit> takeDeferred() {
		List<RouteLimit> taken = this.deferred;
		this.deferred = List.of();
		return taken;
	}

	private record Consumed(Acquisition acquisition, RateLimitResult result, int decision, CountedOutcomes statuses) {
	}

}
