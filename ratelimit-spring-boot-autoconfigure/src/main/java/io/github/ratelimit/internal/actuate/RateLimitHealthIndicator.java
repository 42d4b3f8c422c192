package io.github.ratelimit.internal.actuate;

import java.util.function.Supplier;

import org.springframework.boot.health.contributor.AbstractHealthIndicator;
import org.springframework.boot.health.contributor.Health;

import io.github.ratelimit.store.RateLimitStore;
import io.github.ratelimit.store.StoreStatus;

/**
 * Health of the limiter's store. It stays {@code UP} while the limiter fails open (the
 * local fallback still protects the service, and a failing Redis must not take the
 * application out of its load balancer); the details say which store decides, whether
 * the fallback is active and the circuit breaker's state. Alert on
 * {@code ratelimit.fallback.active} instead.
 */
public final class RateLimitHealthIndicator extends AbstractHealthIndicator {

	private final Supplier<RateLimitStore> store;

	/**
	 * Creates an indicator.
	 * @param store supplies the configured store
	 */
	public RateLimitHealthIndicator(Supplier<RateLimitStore> store) {
		super("Rate limit store health check failed");
		this.store = store;
	}

	@Override
	protected void doHealthCheck(Health.Builder builder) {
		RateLimitStore current = this.store.get();
		builder.up();
		if (current == null) {
			builder.withDetail("store", "none");
			return;
		}
		StoreStatus status = current.status();
		builder.withDetail("store", status.name())
			.withDetail("deciding", status.deciding())
			.withDetail("fallbackActive", status.fallbackActive());
		if (status.circuitBreaker() != null) {
			builder.withDetail("circuitBreaker", status.circuitBreaker());
		}
	}

}
