package io.github.ratelimit.internal.pipeline;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * A {@code 429} or {@code 503} answer ready to be written: status, headers (the rate limit
 * headers, {@code Retry-After}, {@code Cache-Control}) and an
 * {@code application/problem+json} body.
 *
 * @param status the HTTP status
 * @param headers the headers, in order, without {@code Content-Type}
 * @param body the UTF-8 body
 */
public record ProblemResponse(int status, Map<String, String> headers, byte[] body) {

	/** Media type of the body. */
	public static final String CONTENT_TYPE = "application/problem+json";

	public ProblemResponse {
		headers = Collections.unmodifiableMap(new LinkedHashMap<>(headers));
	}

}
