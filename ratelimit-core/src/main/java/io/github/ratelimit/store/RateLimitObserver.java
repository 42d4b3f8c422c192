package io.github.ratelimit.store;

import java.util.List;

/**
 * Sees what the limiter decides and how its stores behave; metrics are one observer.
 * Observers must be fast and must not throw: they run on the request's thread.
 */
public interface RateLimitObserver {

	/**
	 * The time of a decision that was not timed: an in-memory store decides in tens of
	 * nanoseconds, about what reading the clock twice costs, so its decisions are timed one
	 * in {@value #MEMORY_TIMED_ONE_IN}, at random; a remote store's every one.
	 */
	long UNTIMED = -1;

	/** One in how many decisions of an in-memory store are timed. */
	int MEMORY_TIMED_ONE_IN = 64;

	/** An observer that ignores everything. */
	RateLimitObserver NONE = new RateLimitObserver() {
	};

	/**
	 * Called after the limits of one request (or one stage of it) were decided.
	 * @param result the decisions, with the store that made them
	 * @param nanos how long the store took to decide, or {@link #UNTIMED} when the
	 * decision was not timed (in-memory decisions are timed one in
	 * {@value #MEMORY_TIMED_ONE_IN})
	 */
	default void decided(RateLimitResult result, long nanos) {
	}

	/**
	 * Called after the limits of one request (or one stage of it) were decided, with what
	 * was asked: the decision at each index of {@code result} answers the acquisition at
	 * the same index, which names the bucket (limit and identity) and the cost. The
	 * limiter calls this method; by default it calls {@link #decided(RateLimitResult, long)},
	 * which is all that observers that never look at identities (metrics) implement.
	 * @param acquisitions the acquisitions decided, one per decision
	 * @param result the decisions, with the store that made them
	 * @param nanos how long the store took to decide, or {@link #UNTIMED}
	 */
	default void decided(List<Acquisition> acquisitions, RateLimitResult result, long nanos) {
		decided(result, nanos);
	}

	/**
	 * Called after one limit was decided for one identity in place (the usual request),
	 * with the decision as the store wrote it; valid only during the call. By default it
	 * calls {@link #decided(List, RateLimitResult, long)} with the acquisition and the
	 * result this decision stands for; an observer that overrides it sees the request
	 * without the limiter allocating them.
	 * @param limit the limit
	 * @param identity the identity owning the bucket
	 * @param cost the cost asked
	 * @param decision the decision, with the time and the store that made it
	 * @param nanos how long the store took to decide, or {@link #UNTIMED}
	 */
	default void decided(RateLimit limit, String identity, long cost, MutableDecision decision, long nanos) {
		decided(List.of(new Acquisition(limit, identity, cost)), decision.toResult(), nanos);
	}

	/**
	 * Called when what admitted decisions charged is given back: a later stage of the
	 * same request rejected it, or a caller waiting for its slot is gone. Those decisions
	 * were reported to {@link #decided(List, RateLimitResult, long)} as admitted when they were made.
	 * @param acquisitions the acquisitions whose cost is given back, one per decision
	 * @param decided the result that admitted them, with the store that decided
	 */
	default void refunded(List<Acquisition> acquisitions, RateLimitResult decided) {
	}

	/**
	 * Called when admitted decisions were settled at their actual costs (see
	 * {@link RateLimitStore#settle}): each acquisition reserved its cost when it was
	 * decided, and used the actual cost at the same index. Those decisions were reported to
	 * {@link #decided(List, RateLimitResult, long)} with their reserved costs.
	 * @param reserved the acquisitions as they were decided, with their reserved costs
	 * @param decided the result that admitted them, with the store that decided
	 * @param actualCosts the actual cost of each acquisition, in order; the observer's own
	 * copy
	 */
	default void settled(List<Acquisition> reserved, RateLimitResult decided, long[] actualCosts) {
	}

	/**
	 * Called when a call to a store failed or timed out (the fallback then decides).
	 * @param store the store name ({@code redis})
	 * @param failure the failure
	 */
	default void storeFailed(String store, Throwable failure) {
	}

}
