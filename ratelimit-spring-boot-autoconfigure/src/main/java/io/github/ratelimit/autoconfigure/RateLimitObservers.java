package io.github.ratelimit.autoconfigure;

import java.util.List;

import org.springframework.beans.factory.ObjectProvider;

import io.github.ratelimit.store.RateLimitObserver;
import io.github.ratelimit.store.Acquisition;
import io.github.ratelimit.store.MutableDecision;
import io.github.ratelimit.store.RateLimit;
import io.github.ratelimit.store.RateLimitResult;

/**
 * Combines the application's {@link RateLimitObserver} beans into one.
 */
final class RateLimitObservers {

	private RateLimitObservers() {
	}

	static RateLimitObserver of(ObjectProvider<RateLimitObserver> provider) {
		List<RateLimitObserver> observers = provider.orderedStream().toList();
		if (observers.isEmpty()) {
			return RateLimitObserver.NONE;
		}
		if (observers.size() == 1) {
			return observers.get(0);
		}
		return new RateLimitObserver() {

			@Override
			public void decided(RateLimitResult result, long nanos) {
				observers.forEach((observer) -> observer.decided(result, nanos));
			}

			@Override
			public void decided(List<Acquisition> acquisitions, RateLimitResult result, long nanos) {
				observers.forEach((observer) -> observer.decided(acquisitions, result, nanos));
			}

			@Override
			public void decided(RateLimit limit, String identity, long cost, MutableDecision decision, long nanos) {
				for (int i = 0; i < observers.size(); i++) {
					observers.get(i).decided(limit, identity, cost, decision, nanos);
				}
			}

			@Override
			public void refunded(List<Acquisition> acquisitions, RateLimitResult decided) {
				observers.forEach((observer) -> observer.refunded(acquisitions, decided));
			}

			@Override
			public void settled(List<Acquisition> reserved, RateLimitResult decided, long[] actualCosts) {
				// each observer gets its own copy, as the limiter gives one
				observers.forEach((observer) -> observer.settled(reserved, decided, actualCosts.clone()));
			}

			@Override
			public void storeFailed(String store, Throwable failure) {
				observers.forEach((observer) -> observer.storeFailed(store, failure));
			}

		};
	}

}
