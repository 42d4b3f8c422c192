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

}
