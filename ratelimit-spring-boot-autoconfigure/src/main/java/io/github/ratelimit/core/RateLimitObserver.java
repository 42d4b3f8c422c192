package io.github.ratelimit.core;

/**
 * Sees what the limiter decides and how its stores behave; metrics are one observer.
 * Observers must be fast and must not throw: they run on the request's thread.
 */
public interface RateLimitObserver {

	/** An observer that ignores everything. */
	RateLimitObserver NONE = new RateLimitObserver() {
	};

	/**
	 * Called after the limits of one request (or one stage of it) were decided.
	 * @param result the decisions, with the store that made them
	 * @param nanos how long the store took to decide
	 */
	default void decided(RateLimitResult result, long nanos) {
	}

	/**
	 * Called when a call to a store failed or timed out (the fallback then decides).
	 * @param store the store name ({@code redis})
	 * @param failure the failure
	 */
	default void storeFailed(String store, Throwable failure) {
	}

}
