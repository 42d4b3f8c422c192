package io.github.ratelimit.internal.overload;

/**
 * Why an {@link OverloadLimiter} turned a call away.
 */
public enum ShedReason {

	/** Its priority's share of the limit was full, and it could not wait for a place. */
	LIMIT,

	/**
	 * A critical call found the limit full and already as many critical calls waiting
	 * as the places that free up within the wait.
	 */
	QUEUE,

	/**
	 * A critical call waited the critical wait and no place came, or its wait was
	 * interrupted, or the limiter closed.
	 */
	WAIT

}
