package io.github.ratelimit.internal.core;

import io.github.ratelimit.store.MutableDecision;
import io.github.ratelimit.store.RateLimit;
import io.github.ratelimit.store.RateLimitDecision;

/**
 * The mutable state of one bucket and the algorithm that decides on it. Not thread-safe:
 * a store guards each state (for example by locking it) and calls {@link #check} and
 * {@link #commit} within one critical section.
 */
public interface BucketState {

	/**
	 * Decides a request without changing the state.
	 * @param limit the limit, whose algorithm must be the one this state was created for
	 * @param nowMicros the current time
	 * @param cost quota units requested
	 * @return the decision as if the request were committed when allowed
	 */
	RateLimitDecision check(RateLimit limit, long nowMicros, long cost);

	/**
	 * Decides a request that may reserve a future slot, without changing the state. Only
	 * the bucket algorithms can reserve: a request they would reject is admitted instead
	 * when its slot comes within {@code maxDelayMicros}, and the decision's
	 * {@link RateLimitDecision#delayMicros()} says how long to wait for it. The other
	 * algorithms decide as {@link #check(RateLimit, long, long)}.
	 * @param limit the limit, whose algorithm must be the one this state was created for
	 * @param nowMicros the current time
	 * @param cost quota units requested
	 * @param maxDelayMicros longest wait for a reserved slot; 0 reserves nothing
	 * @return the decision as if the request were committed when allowed
	 */
	default RateLimitDecision check(RateLimit limit, long nowMicros, long cost, long maxDelayMicros) {
		return check(limit, nowMicros, cost);
	}

	/**
	 * Decides a request as {@link #check(RateLimit, long, long, long)} does, without
	 * changing the state, and writes the decision into {@code into} instead of returning
	 * it, so that a store deciding on its hot path allocates nothing. The algorithms of
	 * this package allocate nothing here; the default copies the returned decision.
	 * @param limit the limit, whose algorithm must be the one this state was created for
	 * @param nowMicros the current time
	 * @param cost quota units requested
	 * @param maxDelayMicros longest wait for a reserved slot; 0 reserves nothing
	 * @param into where the decision is written (its time and store are left alone)
	 */
	default void check(RateLimit limit, long nowMicros, long cost, long maxDelayMicros, MutableDecision into) {
		into.set(check(limit, nowMicros, cost, maxDelayMicros));
	}

	/**
	 * Decides a request as {@link #check(RateLimit, long, long, long, MutableDecision)}
	 * does and, when it is admitted, records it as {@link #commit} does, in one step: what
	 * a store does for a request with a single limit.
	 * @param limit the limit, whose algorithm must be the one this state was created for
	 * @param nowMicros the current time
	 * @param cost quota units requested
	 * @param maxDelayMicros longest wait for a reserved slot; 0 reserves nothing
	 * @param into where the decision is written (its time and store are left alone)
	 */
	default void acquire(RateLimit limit, long nowMicros, long cost, long maxDelayMicros, MutableDecision into) {
		check(limit, nowMicros, cost, maxDelayMicros, into);
		if (into.allowed()) {
			commit(limit, nowMicros, cost);
		}
	}

	/**
	 * Records an admitted request. Only called after {@link #check} allowed it at the same
	 * time.
	 * @param limit the limit
	 * @param nowMicros the time of the check
	 * @param cost quota units taken
	 */
	void commit(RateLimit limit, long nowMicros, long cost);

	/**
	 * Gives back a committed request.
	 * @param limit the limit
	 * @param timestampMicros the time the request was committed at
	 * @param cost quota units to give back
	 */
	void refund(RateLimit limit, long timestampMicros, long cost);

	/**
	 * Charges units unconditionally, at the time of the call, even beyond what is left:
	 * what settling a call whose actual cost exceeded its reservation does. The state then
	 * holds a debt (a token bucket's refill time, a leaky bucket's drain time or a window's
	 * count beyond the capacity) that later requests find as quota used up. By default a
	 * charge is a {@link #commit}, which records without deciding.
	 * @param limit the limit
	 * @param nowMicros the time of the charge
	 * @param cost quota units charged, positive, possibly beyond the capacity
	 */
	default void charge(RateLimit limit, long nowMicros, long cost) {
		commit(limit, nowMicros, cost);
	}

	/**
	 * Settles a committed request at its actual cost: gives back what it reserved beyond
	 * that cost, as {@link #refund} gives back, or charges what it used beyond its
	 * reservation, as {@link #charge} does.
	 * @param limit the limit
	 * @param timestampMicros the time the request was committed at
	 * @param nowMicros the time of the settlement, at which a charge is made
	 * @param reserved quota units the request took when committed
	 * @param actual quota units the request used, not negative
	 */
	default void settle(RateLimit limit, long timestampMicros, long nowMicros, long reserved, long actual) {
		if (actual < reserved) {
			refund(limit, timestampMicros, reserved - actual);
		}
		else if (actual > reserved) {
			charge(limit, nowMicros, actual - reserved);
		}
	}

	/**
	 * Time beyond the limit's {@link RateLimit#idleTtlMicros() idle time} that this state
	 * still matters at {@code nowMicros}: how long a debt lasts past a whole quota's refill.
	 * A store keeping states for a limited time keeps this one that much longer.
	 * @param limit the limit
	 * @param nowMicros the current time
	 * @return microseconds, 0 for a state without debt
	 */
	default long overdraftMicros(RateLimit limit, long nowMicros) {
		return 0;
	}

	/**
	 * The algorithm this state belongs to.
	 * @return the algorithm
	 */
	io.github.ratelimit.Algorithm algorithm();

	/**
	 * Creates an empty state (full quota) for a limit.
	 * @param limit the limit
	 * @return a new state
	 */
	static BucketState create(RateLimit limit) {
		return AlgorithmSpec.of(limit.algorithm()).newState();
	}

}
