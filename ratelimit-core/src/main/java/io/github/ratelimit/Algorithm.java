package io.github.ratelimit;

/**
 * Rate limiting algorithms. All of them accept weighted costs and make the same decision
 * for the same sequence of (time, cost) in every store.
 */
public enum Algorithm {

	/** Bucket of {@code capacity} tokens refilled continuously; bursts up to capacity. */
	TOKEN_BUCKET,

	/**
	 * Queue of {@code capacity} drained at the refill rate; admitted requests are delayed
	 * until their drain slot, requests that would overflow the queue are rejected.
	 */
	LEAKY_BUCKET,

	/**
	 * At most {@code capacity} per window of length {@code period}, windows aligned to the
	 * epoch; or per calendar day, week or month in a time zone (see {@link CalendarPeriod}).
	 */
	FIXED_WINDOW,

	/** Exactly at most {@code capacity} in any interval of length {@code period}. */
	SLIDING_WINDOW_LOG,

	/** Weighted estimate of the previous and current window; constant state per identity. */
	SLIDING_WINDOW_COUNTER,

	/**
	 * At most {@code capacity} calls in flight at once. A call holds its permits until it
	 * completes (returns, throws, its future or publisher completes, or its HTTP response
	 * is answered); permits a lost holder never gave back expire after {@code period}
	 * (default one minute), which should exceed the slowest call.
	 */
	CONCURRENCY

}
