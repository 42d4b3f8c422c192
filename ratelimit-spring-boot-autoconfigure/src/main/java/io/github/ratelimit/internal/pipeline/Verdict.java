package io.github.ratelimit.internal.pipeline;

/**
 * What a stage of a request came to: go on (possibly after a leaky bucket's drain delay),
 * or answer with a problem response.
 *
 * @param problem the {@code 429} or {@code 503} to answer with, or {@code null} when the
 * request may proceed
 * @param delayMicros how long to hold an admitted request before it proceeds
 */
public record Verdict(ProblemResponse problem, long delayMicros) {

	/** Admitted without delay. */
	public static final Verdict PROCEED = new Verdict(null, 0);

	/**
	 * Whether the request may proceed.
	 * @return whether it was admitted
	 */
	public boolean proceeds() {
		return this.problem == null;
	}

}
