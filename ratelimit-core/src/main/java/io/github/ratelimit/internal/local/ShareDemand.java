package io.github.ratelimit.internal.local;

import io.github.ratelimit.store.RateLimit;

/**
 * How many units a share should hold: about {@value #INTERVALS_AHEAD} sync intervals of
 * its bucket's recent demand, never more than the limit's capacity, and none for a bucket
 * asked once an interval at most (a share there would cost a call per sync for one
 * request).
 */
final class ShareDemand {

	/** A share holds about this many sync intervals of its bucket's recent demand. */
	static final int INTERVALS_AHEAD = 2;

	private ShareDemand() {
	}

	/**
	 * Units a share should hold for a demand.
	 * @param limit the limit, whose capacity bounds the share
	 * @param demand units asked for in one sync interval
	 * @return the units to hold
	 */
	static long target(RateLimit limit, long demand) {
		return Math.min(limit.capacity(), INTERVALS_AHEAD * demand);
	}

	/**
	 * Whether a bucket is too cold for a share of more than a request's cost.
	 * @param requests requests in one sync interval
	 * @return whether it had one request at most
	 */
	static boolean cold(long requests) {
		return requests <= 1;
	}

}
