package io.github.ratelimit.e2e;

import java.util.concurrent.CompletableFuture;

/**
 * Handlers that stay in flight until a test lets them finish, so that the number of calls
 * in flight is what the test makes it, not what timing makes it.
 */
final class HeldCalls {

	private static volatile CompletableFuture<Void> release = new CompletableFuture<>();

	private HeldCalls() {
	}

	/** Holds every handler called from now on until {@link #open()}. */
	static void close() {
		release = new CompletableFuture<>();
	}

	/** Lets every held handler finish, and those called later pass at once. */
	static void open() {
		release.complete(null);
	}

	/**
	 * Completes when the handlers are let go.
	 * @return the release signal
	 */
	static CompletableFuture<Void> released() {
		return release;
	}

}
