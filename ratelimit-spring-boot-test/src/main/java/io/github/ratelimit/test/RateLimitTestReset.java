package io.github.ratelimit.test;

import org.springframework.beans.factory.ObjectProvider;

import io.github.ratelimit.internal.core.RateLimitClock;
import io.github.ratelimit.internal.core.RateLimiter;
import io.github.ratelimit.store.RateLimitStore;

/**
 * Puts rate limiting back to where a test starts: the clock at its start, no bucket, no
 * recorded decision. The beans are looked up when a test starts, so that it resets what
 * the context holds then (nothing, when rate limiting is switched off).
 */
final class RateLimitTestReset {

	private final ObjectProvider<RateLimiter> rateLimiter;

	private final ObjectProvider<RateLimitClock> clock;

	private final ObjectProvider<RateLimitDecisions> decisions;

	RateLimitTestReset(ObjectProvider<RateLimiter> rateLimiter, ObjectProvider<RateLimitClock> clock,
			ObjectProvider<RateLimitDecisions> decisions) {
		this.rateLimiter = rateLimiter;
		this.clock = clock;
		this.decisions = decisions;
	}

	void reset() {
		this.clock.ifUnique((clock) -> {
			if (clock instanceof TestRateLimitClock testClock) {
				testClock.reset();
			}
		});
		this.rateLimiter.ifUnique((limiter) -> resetAll(limiter.getStore()));
		this.decisions.ifUnique(RateLimitDecisions::clear);
	}

	private static void resetAll(RateLimitStore store) {
		try {
			store.resetAll();
		}
		catch (UnsupportedOperationException ex) {
			throw new IllegalStateException("Rate limit store '" + store.name() + "' cannot forget its buckets "
					+ "between tests: implement RateLimitStore.resetAll() in " + store.getClass().getName(), ex);
		}
		catch (RuntimeException ex) {
			throw new IllegalStateException("Rate limit store '" + store.name() + "' could not forget its buckets "
					+ "before the test (" + ex.getClass().getSimpleName() + ": " + ex.getMessage() + "). The test "
					+ "runs on the application's store (@AutoConfigureRateLimitTest(store = APPLICATION)), which "
					+ "must be running; leave store at MEMORY to decide the test's limits in memory", ex);
		}
	}

}
