package io.github.ratelimit.internal.client;

import java.time.Duration;

import org.springframework.http.client.ClientHttpResponse;

/**
 * Signals to {@code RetryTemplate}, which retries on exceptions, that an attempt got a
 * response worth retrying. Carries the response, returned as is when no retry follows,
 * and the delay the server asked for.
 */
final class RetryableResponse extends Exception {

	private static final long serialVersionUID = 1L;

	private final transient ClientHttpResponse response;

	private final transient Duration serverDelay;

	private boolean released;

	RetryableResponse(ClientHttpResponse response, Duration serverDelay, String description) {
		// control flow, not a failure: no stack trace
		super(description, null, false, false);
		this.response = response;
		this.serverDelay = serverDelay;
	}

	ClientHttpResponse response() {
		return this.response;
	}

	/** The delay from {@code Retry-After} or {@code RateLimit}, or {@code null}. */
	Duration serverDelay() {
		return this.serverDelay;
	}

	/** Closes the response, which will not reach the caller, so its connection is reused. */
	void release() {
		this.released = true;
		this.response.close();
	}

	boolean isReleased() {
		return this.released;
	}

}
