package io.github.ratelimit.internal.pipeline;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;

import io.github.ratelimit.RequestPriority;

/**
 * The answer to a request that overload protection turns away: {@code 503 Service
 * Unavailable} with {@code Retry-After} and an {@code application/problem+json} body of
 * type {@code temporary-reduced-capacity}, never cacheable, as a fail-closed limit answers.
 */
public final class OverloadResponses {

	private static final String TITLE = "Temporary reduced capacity";

	private final ProblemResponse[] byPriority = new ProblemResponse[RequestPriority.values().length];

	/**
	 * Renders the answers once: they differ by priority only.
	 * @param retryAfter how long a client is told to wait, rounded up to whole seconds
	 */
	public OverloadResponses(Duration retryAfter) {
		long seconds = Math.max(1, RateLimitResponses.ceilSeconds((retryAfter.toNanos() + 999) / 1_000));
		for (RequestPriority priority : RequestPriority.values()) {
			this.byPriority[priority.ordinal()] = render(priority, seconds);
		}
	}

	/**
	 * The answer to a request turned away.
	 * @param priority the request's priority
	 * @return the response to write
	 */
	public ProblemResponse shed(RequestPriority priority) {
		return this.byPriority[priority.ordinal()];
	}

	private static ProblemResponse render(RequestPriority priority, long retryAfter) {
		String detail = "The service is overloaded and turns away " + priority.name().toLowerCase(Locale.ROOT)
				+ " requests; retry after " + retryAfter + ((retryAfter == 1) ? " second." : " seconds.");
		String body = "{\"type\":" + RateLimitResponses.json(RateLimitResponses.TEMPORARY_REDUCED_CAPACITY)
				+ ",\"title\":" + RateLimitResponses.json(TITLE) + ",\"status\":503,\"detail\":"
				+ RateLimitResponses.json(detail) + ",\"priority\":"
				+ RateLimitResponses.json(priority.name().toLowerCase(Locale.ROOT)) + "}";
		Map<String, String> headers = new LinkedHashMap<>();
		headers.put("Retry-After", Long.toString(retryAfter));
		headers.put("Cache-Control", "no-store");
		return new ProblemResponse(503, headers, body.getBytes(StandardCharsets.UTF_8));
	}

}
