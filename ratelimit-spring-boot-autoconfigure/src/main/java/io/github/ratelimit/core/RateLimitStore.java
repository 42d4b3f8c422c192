package io.github.ratelimit.core;

import java.util.List;

/**
 * Where buckets live. Implementations decide atomically and, for remote stores, in one
 * network round trip per call.
 */
public interface RateLimitStore {

	/**
	 * Decides every acquisition together: either all of them are admitted and each
	 * consumes its cost, or none consumes anything.
	 * @param acquisitions acquisitions naming distinct buckets
	 * @return one decision per acquisition, in order
	 */
	RateLimitResult tryAcquire(List<Acquisition> acquisitions);

	/**
	 * Gives back what an earlier admitted {@link #tryAcquire} consumed, used when a later
	 * stage of the same request is rejected.
	 * @param acquisitions the acquisitions that were admitted
	 * @param timestampMicros the {@link RateLimitResult#timestampMicros()} of that call
	 */
	void refund(List<Acquisition> acquisitions, long timestampMicros);

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
