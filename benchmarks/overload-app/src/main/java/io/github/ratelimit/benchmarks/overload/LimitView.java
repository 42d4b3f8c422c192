package io.github.ratelimit.benchmarks.overload;

/**
 * What a protection variant of the benchmark's own (fixed, Netflix) shows of its limit at
 * {@code GET /bench/state}, in the shape this library's actuator endpoint gives its
 * overload section, so that one probe reads both.
 */
interface LimitView {

	/**
	 * The current limit on calls in flight.
	 * @return the limit
	 */
	int limit();

	/**
	 * The calls the limit admitted that are still in flight.
	 * @return the calls in flight
	 */
	int inFlight();

}
