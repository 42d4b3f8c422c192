package io.github.ratelimit.internal.pipeline;

/**
 * How rate limit state is advertised in response headers.
 */
public enum HeaderStyle {

	/**
	 * {@code RateLimit-Policy} and {@code RateLimit} structured fields of
	 * draft-ietf-httpapi-ratelimit-headers-10.
	 */
	IETF,

	/** {@code RateLimit-Limit}, {@code RateLimit-Remaining} and {@code RateLimit-Reset} (draft 06). */
	DRAFT_06,

	/** {@code X-RateLimit-Limit}, {@code X-RateLimit-Remaining} and {@code X-RateLimit-Reset}. */
	X_RATELIMIT,

	/** No rate limit headers; rejections still carry {@code Retry-After}. */
	NONE

}
