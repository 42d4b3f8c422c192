package io.github.ratelimit;

/**
 * How much a request matters when the service is overloaded. When the adaptive limit on
 * calls in flight ({@code ratelimit.overload}) is reached, sheddable requests are turned
 * away first, then normal ones; critical requests keep a reserved share of the limit.
 */
public enum RequestPriority {

	/** Keeps the reserved share of the limit: turned away last. */
	CRITICAL,

	/** The default priority of a request. */
	NORMAL,

	/** Turned away first when the service saturates. */
	SHEDDABLE

}
