package io.github.ratelimit.store;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

import io.github.ratelimit.Algorithm;

/**
 * Where buckets live. Implementations decide atomically and, for remote stores, in one
 * network round trip per call.
 */
public interface RateLimitStore {

	/**
	 * Decides every acquisition together, all-or-nothing: either every enforced limit
	 * admits and each acquisition consumes its cost, or none consumes anything. The bucket
	 * algorithms may reserve a future slot: a token or leaky bucket that would reject
	 * admits instead when the slot comes within {@code maxDelayMicros}, consumes its cost
	 * now and reports the wait in {@link RateLimitDecision#delayMicros()}, so that callers
	 * reserving one after another are released one emission interval apart. The window
	 * algorithms never reserve (callers retry after the retry-after).
	 * @param acquisitions acquisitions naming distinct buckets
	 * @param maxDelayMicros longest wait for a reserved slot; 0 reserves nothing
	 * @return one decision per acquisition, in order, and the store that decided
	 */
	RateLimitResult tryAcquire(List<Acquisition> acquisitions, long maxDelayMicros);

	/**
	 * Decides every acquisition together without reserving future slots: the same as
	 * {@code tryAcquire(acquisitions, 0)}.
	 * @param acquisitions acquisitions naming distinct buckets
	 * @return one decision per acquisition, in order
	 */
	default RateLimitResult tryAcquire(List<Acquisition> acquisitions) {
		return tryAcquire(acquisitions, 0);
	}

	/**
	 * Decides one acquisition, as {@code tryAcquire(List.of(new Acquisition(limit,
	 * identity, cost)), maxDelayMicros)} does, and writes the decision, its time and the
	 * store into {@code into}. The in-memory store allocates nothing here; the default
	 * makes the list call and copies its result, so every store and decorator answers it.
	 * @param limit the limit
	 * @param identity the identity owning the bucket, already normalised and bounded
	 * @param cost quota units to take, at least 1 and at most the limit's capacity
	 * @param maxDelayMicros longest wait for a reserved slot; 0 reserves nothing
	 * @param into where the decision is written
	 * @return whether the request may proceed: the limit admitted it, or it only records
	 * (shadow mode)
	 * @throws IllegalArgumentException when the cost is not positive or exceeds the
	 * capacity
	 */
	default boolean tryAcquire(RateLimit limit, String identity, long cost, long maxDelayMicros,
			MutableDecision into) {
		RateLimitResult result = tryAcquire(List.of(new Acquisition(limit, identity, cost)), maxDelayMicros);
		into.set(result.decisions().get(0)).decidedAt(result.timestampMicros(), result.store(), result.refundTo());
		return !into.rejects();
	}

	/**
	 * Decides like {@link #tryAcquire(List, long)} without holding the calling thread while
	 * the store works, for callers on an event loop. Stores that do I/O override it; the
	 * default decides on the calling thread, which suits a store that only touches memory.
	 * @param acquisitions acquisitions naming distinct buckets
	 * @param maxDelayMicros longest wait for a reserved slot; 0 reserves nothing
	 * @return the decisions, completed exceptionally as {@link #tryAcquire} would throw
	 */
	default CompletionStage<RateLimitResult> tryAcquireAsync(List<Acquisition> acquisitions, long maxDelayMicros) {
		try {
			return CompletableFuture.completedFuture(tryAcquire(acquisitions, maxDelayMicros));
		}
		catch (RuntimeException ex) {
			return CompletableFuture.failedFuture(ex);
		}
	}

	/**
	 * Gives back what an earlier admitted {@link #tryAcquire} consumed, used when a later
	 * stage of the same request is rejected.
	 * @param acquisitions the acquisitions that were admitted
	 * @param decided the result of that call: its time, and which store decided it
	 */
	void refund(List<Acquisition> acquisitions, RateLimitResult decided);

	/**
	 * Gives back like {@link #refund} without holding the calling thread while the store
	 * works, for callers on an event loop. Stores that do I/O override it; the default
	 * gives back on the calling thread.
	 * @param acquisitions the acquisitions that were admitted
	 * @param decided the result of that call: its time, and which store decided it
	 * @return completes when the store has given back, exceptionally as {@link #refund}
	 * would throw
	 */
	default CompletionStage<Void> refundAsync(List<Acquisition> acquisitions, RateLimitResult decided) {
		try {
			refund(acquisitions, decided);
			return CompletableFuture.completedFuture(null);
		}
		catch (RuntimeException ex) {
			return CompletableFuture.failedFuture(ex);
		}
	}

	/**
	 * Settles admitted acquisitions at their actual costs, known only once their calls
	 * ended: each acquisition reserved its estimated cost when {@link #tryAcquire} admitted
	 * it, and the difference is given back or charged now, for every acquisition in one
	 * atomic step.
	 * <ul>
	 * <li>An actual cost below the reservation gives the difference back, as
	 * {@link #refund} gives back (nothing for a window that has passed since).</li>
	 * <li>An actual cost above it charges the difference unconditionally, at the time of
	 * this call, even beyond what is left: the bucket goes into debt, and its next requests
	 * are refused (or wait) until the debt is paid. A token or leaky bucket pays its debt as
	 * it refills or drains; a window carries it until the window ends (a charge made after
	 * the reservation's window has passed counts in the current one).</li>
	 * <li>An actual cost equal to the reservation changes nothing.</li>
	 * </ul>
	 * A limit on calls in flight has no cost to settle: settling one fails. The default
	 * implementation refuses to settle; every store of this library settles.
	 * @param reserved the acquisitions that were admitted, each with its reserved cost
	 * @param decided the result of that call: its time, and which store decided it
	 * @param actualCosts the actual cost of each acquisition, in order, not negative and
	 * possibly beyond the limit's capacity; read before this method returns
	 * @throws IllegalArgumentException when the actual costs do not match the acquisitions
	 * one for one, one is negative, or an acquisition is of a limit on calls in flight
	 * @throws UnsupportedOperationException when the store cannot settle
	 */
	default void settle(List<Acquisition> reserved, RateLimitResult decided, long[] actualCosts) {
		requireSettleable(reserved, actualCosts);
		throw new UnsupportedOperationException(getClass().getName() + " cannot settle costs");
	}

	/**
	 * Settles like {@link #settle} without holding the calling thread while the store
	 * works, for callers on an event loop. Stores that do I/O override it; the default
	 * settles on the calling thread.
	 * @param reserved the acquisitions that were admitted, each with its reserved cost
	 * @param decided the result of that call: its time, and which store decided it
	 * @param actualCosts the actual cost of each acquisition, in order; read before this
	 * method returns
	 * @return completes when the store has settled, exceptionally as {@link #settle} would
	 * throw
	 */
	default CompletionStage<Void> settleAsync(List<Acquisition> reserved, RateLimitResult decided,
			long[] actualCosts) {
		try {
			settle(reserved, decided, actualCosts);
			return CompletableFuture.completedFuture(null);
		}
		catch (RuntimeException ex) {
			return CompletableFuture.failedFuture(ex);
		}
	}

	/**
	 * The store's name, as metrics, health and the actuator endpoint report it.
	 * @return {@code memory}, {@code redis}, or the name of an application's store (by
	 * default its class name)
	 */
	default String name() {
		return getClass().getName();
	}

	/**
	 * What the store says about itself now: which store decides, and what it keeps in
	 * memory. Decorators answer for what they wrap.
	 * @return the status
	 */
	default StoreStatus status() {
		return StoreStatus.of(name());
	}

	/**
	 * Reads the state of one bucket without consuming anything or creating it.
	 * @param limit the limit
	 * @param identity the identity owning the bucket
	 * @return what a request of cost 1 would find now
	 * @throws UnsupportedOperationException when the store cannot read its buckets
	 */
	default BucketSnapshot inspect(RateLimit limit, String identity) {
		throw new UnsupportedOperationException(getClass().getName() + " cannot inspect buckets");
	}

	/**
	 * Forgets the state of one bucket, so that its next request finds a whole quota.
	 * @param limit the limit
	 * @param identity the identity owning the bucket
	 * @return whether the store held state for the bucket
	 * @throws UnsupportedOperationException when the store cannot reset its buckets
	 */
	default boolean reset(RateLimit limit, String identity) {
		throw new UnsupportedOperationException(getClass().getName() + " cannot reset buckets");
	}

	/**
	 * Forgets every bucket the store holds, so that every identity's next request finds a
	 * whole quota: what a test does between two tests. A remote store looks its keys up
	 * with a command that holds the server for a time proportional to the keys it has
	 * (Redis {@code KEYS}), so this is no operation for a production server.
	 * @throws UnsupportedOperationException when the store cannot forget its buckets
	 */
	default void resetAll() {
		throw new UnsupportedOperationException(getClass().getName() + " cannot reset all buckets");
	}

	/**
	 * Checks the arguments of {@link #settle}: acquisitions naming distinct buckets, none
	 * of a limit on calls in flight, and one actual cost, not negative, for each.
	 * @param reserved the acquisitions to settle
	 * @param actualCosts their actual costs
	 * @throws IllegalArgumentException when they do not qualify
	 */
	static void requireSettleable(List<Acquisition> reserved, long[] actualCosts) {
		if (actualCosts.length != reserved.size()) {
			throw new IllegalArgumentException("one actual cost per acquisition is needed: " + actualCosts.length
					+ " for " + reserved.size() + " acquisitions");
		}
		for (int i = 0; i < actualCosts.length; i++) {
			Acquisition acquisition = reserved.get(i);
			if (acquisition.limit().algorithm() == Algorithm.CONCURRENCY) {
				throw new IllegalArgumentException("limit '" + acquisition.limit().name()
						+ "' counts calls in flight, which have no cost to settle: settle is for limits"
						+ " that count units over time");
			}
			if (actualCosts[i] < 0) {
				throw new IllegalArgumentException("actual cost must not be negative: " + actualCosts[i]
						+ " for limit '" + acquisition.limit().name() + "'");
			}
		}
		requireDistinct(reserved);
	}

	/**
	 * Checks that acquisitions name distinct buckets.
	 * @param acquisitions the acquisitions
	 * @throws IllegalArgumentException when two name the same bucket
	 */
	static void requireDistinct(List<Acquisition> acquisitions) {
		for (int i = 0; i < acquisitions.size(); i++) {
			for (int j = i + 1; j < acquisitions.size(); j++) {
				if (acquisitions.get(i).key().equals(acquisitions.get(j).key())) {
					throw new IllegalArgumentException("acquisitions must name distinct buckets: "
							+ acquisitions.get(i).key() + " appears twice; merge their costs");
				}
			}
		}
	}

}
