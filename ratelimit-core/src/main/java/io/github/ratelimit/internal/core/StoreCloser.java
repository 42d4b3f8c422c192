package io.github.ratelimit.internal.core;

import io.github.ratelimit.store.RateLimitStore;

/**
 * Closes a store a decorator wraps, when that store holds resources of its own (the sync
 * thread and the shares of a local-first store).
 */
final class StoreCloser {

	private StoreCloser() {
	}

	static void close(RateLimitStore store) {
		if (store instanceof AutoCloseable closeable) {
			try {
				closeable.close();
			}
			catch (RuntimeException ex) {
				throw ex;
			}
			catch (Exception ex) {
				throw new IllegalStateException("Could not close the rate limit store: " + ex, ex);
			}
		}
	}

}
