package io.github.ratelimit;

/**
 * What a limit does when its store cannot answer.
 */
public enum FailMode {

	/** A local in-memory limiter enforcing a share of the limit decides. */
	OPEN,

	/** The request is refused with {@code 503 Service Unavailable}. */
	CLOSED

}
