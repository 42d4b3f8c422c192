package io.github.ratelimit.internal.overload;

/**
 * An algorithm that learns how many calls may be in flight at once from how calls end.
 * Called by one thread at a time: {@link OverloadLimiter} serialises samples.
 */
public interface AdaptiveLimit {

	/**
	 * The current limit on calls in flight.
	 * @return the limit, at least 1
	 */
	int limit();

	/**
	 * Learns from one finished call.
	 * @param startNanos when the call started, on the limiter's ticker
	 * @param rttNanos how long the call took
	 * @param inFlight how many calls were in flight when it started, itself included
	 * @param dropped whether the call failed in a way that signals overload (a 5xx answer
	 * or a timeout)
	 */
	void onSample(long startNanos, long rttNanos, int inFlight, boolean dropped);

	/**
	 * Learns from one finished call that was admitted under a ceiling, its priority's
	 * share of the limit. A call whose priority may only fill part of the limit shows the
	 * limit in use as soon as the calls in flight approach that share, so the algorithms
	 * judge whether the limit is used against the ceiling, not the whole limit. The
	 * default ignores the ceiling.
	 * @param startNanos when the call started, on the limiter's ticker
	 * @param rttNanos how long the call took
	 * @param inFlight how many calls were in flight when it started, itself included
	 * @param ceiling how many calls of its priority could be in flight when it started
	 * @param dropped whether the call failed in a way that signals overload
	 */
	default void onSample(long startNanos, long rttNanos, int inFlight, int ceiling, boolean dropped) {
		onSample(startNanos, rttNanos, inFlight, dropped);
	}

}
