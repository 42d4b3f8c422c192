package io.github.ratelimit.autoconfigure;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;

import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.RedisConnectionFactory;

import io.github.ratelimit.store.RateLimitStore;
import io.github.ratelimit.store.StoreStatus;

/**
 * Health of a Redis that serves rate limits only, in place of Spring Boot's {@code redis}
 * indicator. It pings Redis but waits for the answer at most the store's timeout, and
 * stays {@code UP} when Redis fails, since the limiter's local fallback decides then and
 * a failing Redis must not take the application out of its load balancer. The details
 * say whether Redis answered ({@code redis}: {@code reachable} or {@code unreachable},
 * with the {@code error}), which store decides, whether the fallback is active and the
 * circuit breaker's state.
 * <p>
 * A ping that Redis leaves unanswered keeps running in the background (up to the
 * connection's own timeouts); checks made meanwhile wait for that ping rather than start
 * another, so a hung Redis costs one thread, not one per check.
 */
final class RateLimitRedisHealthIndicator implements HealthIndicator {

	private final RedisConnectionFactory connectionFactory;

	private final Supplier<RateLimitStore> store;

	private final Duration timeout;

	private final AtomicReference<CompletableFuture<String>> ping = new AtomicReference<>();

	/**
	 * Creates an indicator.
	 * @param connectionFactory the factory of the connections the store uses
	 * @param store supplies the configured store
	 * @param timeout the longest a check waits for Redis
	 */
	RateLimitRedisHealthIndicator(RedisConnectionFactory connectionFactory, Supplier<RateLimitStore> store,
			Duration timeout) {
		this.connectionFactory = connectionFactory;
		this.store = store;
		this.timeout = timeout;
	}

	@Override
	public Health health() {
		Health.Builder builder = Health.up();
		try {
			ping().get(this.timeout.toNanos(), TimeUnit.NANOSECONDS);
			builder.withDetail("redis", "reachable");
		}
		catch (TimeoutException ex) {
			builder.withDetail("redis", "unreachable")
				.withDetail("error", "no answer within " + this.timeout.toMillis() + "ms");
		}
		catch (ExecutionException ex) {
			Throwable cause = (ex.getCause() != null) ? ex.getCause() : ex;
			builder.withDetail("redis", "unreachable")
				.withDetail("error", cause.getClass().getName() + ": " + cause.getMessage());
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			builder.withDetail("redis", "unknown").withDetail("error", "interrupted");
		}
		RateLimitStore current = this.store.get();
		if (current != null) {
			StoreStatus status = current.status();
			builder.withDetail("deciding", status.deciding()).withDetail("fallbackActive", status.fallbackActive());
			if (status.circuitBreaker() != null) {
				builder.withDetail("circuitBreaker", status.circuitBreaker());
			}
		}
		return builder.build();
	}

	/** The ping in flight, or a new one when the last has finished. */
	private CompletableFuture<String> ping() {
		while (true) {
			CompletableFuture<String> current = this.ping.get();
			if (current != null && !current.isDone()) {
				return current;
			}
			CompletableFuture<String> next = new CompletableFuture<>();
			if (this.ping.compareAndSet(current, next)) {
				Thread thread = new Thread(() -> {
					try (RedisConnection connection = this.connectionFactory.getConnection()) {
						next.complete(connection.ping());
					}
					catch (Throwable ex) {
						next.completeExceptionally(ex);
					}
				}, "ratelimit-redis-health");
				thread.setDaemon(true);
				thread.start();
				return next;
			}
		}
	}

}
