package io.github.ratelimit.internal.pipeline;

import java.util.ArrayList;
import java.util.List;
import java.util.function.BiConsumer;

import io.github.ratelimit.RateLimitUnavailableException;
import io.github.ratelimit.internal.core.RateLimiter;
import io.github.ratelimit.store.MutableDecision;
import io.github.ratelimit.store.RateLimitDecision;

/**
 * Renders what a request's limits came to: its rate limit headers, the {@code 429} of a
 * rejection and the {@code 503} of fail-closed limits whose store is down, which give back
 * what earlier stages of the request consumed.
 */
public final class VerdictRenderer {

	private final RateLimiter limiter;

	private final RateLimitResponses responses;

	/**
	 * Creates a renderer.
	 * @param limiter gives back what earlier stages consumed
	 * @param responses renders headers and problem responses
	 */
	public VerdictRenderer(RateLimiter limiter, RateLimitResponses responses) {
		this.limiter = limiter;
		this.responses = responses;
	}

	/**
	 * The {@code 429} for a request, with every decision recorded for it.
	 * @param state the request's state
	 * @return the response to write
	 */
	ProblemResponse rejection(RequestLimits state) {
		return this.responses.rejection(state.decisions());
	}

	/**
	 * The {@code 429} for a request, with every decision made for it.
	 * @param state the request's state, or {@code null} when no stage recorded anything
	 * @param decisions decisions of the rejecting stage, if not recorded yet
	 * @return the response to write
	 */
	public ProblemResponse rejection(RequestLimits state, List<RateLimitDecision> decisions) {
		List<RateLimitDecision> all = new ArrayList<>();
		if (state != null) {
			all.addAll(state.decisions());
		}
		for (RateLimitDecision decision : decisions) {
			if (!all.contains(decision)) {
				all.add(decision);
			}
		}
		return this.responses.rejection(all);
	}

	/**
	 * The {@code 503} for fail-closed limits whose store is down, giving back what earlier
	 * stages consumed.
	 * @param state the request's state, or {@code null} when no stage recorded anything
	 * @param unavailable what could not be decided
	 * @return the response to write
	 */
	public ProblemResponse unavailable(RequestLimits state, RateLimitUnavailableException unavailable) {
		if (state != null) {
			state.refundAll(this.limiter);
		}
		return this.responses.unavailable(unavailable);
	}

	/**
	 * The {@code 503} as {@link #unavailable}, giving back without waiting for the store:
	 * for event loops.
	 * @param state the request's state, or {@code null} when no stage recorded anything
	 * @param unavailable what could not be decided
	 * @return the response to write
	 */
	public ProblemResponse unavailableAsync(RequestLimits state, RateLimitUnavailableException unavailable) {
		if (state != null) {
			state.refundAllAsync(this.limiter);
		}
		return this.responses.unavailable(unavailable);
	}

	/**
	 * The rate limit headers for every decision made for a request so far.
	 * @param state the request's state
	 * @param headers receives each header
	 */
	public void headers(RequestLimits state, BiConsumer<String, String> headers) {
		if (state.keptInPlace()) {
			state.writeKeptHeaders(this.responses, (name, value) -> headers.accept(name, value.toString()));
			return;
		}
		this.responses.headers(state.decisions(), headers);
	}

	/**
	 * The rate limit headers for every decision made for a request so far, as
	 * {@link #headers(RequestLimits, BiConsumer)}, handing values as text the renderer
	 * reuses: a request whose one decision was kept in place allocates nothing for them.
	 * @param state the request's state
	 * @param headers receives each header; a value is valid until it returns
	 */
	public void writeHeaders(RequestLimits state, RateLimitResponses.HeaderSink headers) {
		if (!state.writeKeptHeaders(this.responses, headers)) {
			this.responses.headers(state.decisions(), headers::header);
		}
	}

	/**
	 * The rate limit headers of a stage's one admitting decision, as the store wrote it
	 * for the calling thread, handing values as text the renderer reuses.
	 * @param decision the decision, read here only
	 * @param headers receives each header; a value is valid until it returns
	 */
	void writeHeaders(MutableDecision decision, RateLimitResponses.HeaderSink headers) {
		this.responses.headers(decision.limit(), decision.remaining(), decision.resetMicros(),
				decision.windowMicros(), headers);
	}

}
