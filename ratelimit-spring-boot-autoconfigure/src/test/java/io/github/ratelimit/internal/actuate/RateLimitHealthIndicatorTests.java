package io.github.ratelimit.internal.actuate;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

import org.junit.jupiter.api.Test;

import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.Status;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.internal.core.CircuitBreaker;
import io.github.ratelimit.internal.core.FailoverRateLimitStore;
import io.github.ratelimit.internal.core.FailoverSettings;
import io.github.ratelimit.internal.core.ThrottledLog;
import io.github.ratelimit.internal.memory.InMemoryRateLimitStore;
import io.github.ratelimit.store.Acquisition;
import io.github.ratelimit.store.RateLimit;
import io.github.ratelimit.store.RateLimitResult;
import io.github.ratelimit.store.RateLimitStore;
import io.github.ratelimit.store.contract.MutableClock;

import static org.assertj.core.api.Assertions.assertThat;

class RateLimitHealthIndicatorTests {

	@Test
	void staysUpWhileFailingOpenAndSaysSo() {
		MutableClock clock = new MutableClock(MutableClock.DEFAULT_START_MICROS);
		RateLimitStore dead = new RateLimitStore() {
			@Override
			public RateLimitResult tryAcquire(List<Acquisition> acquisitions, long maxDelayMicros) {
				throw new IllegalStateException("connection refused");
			}

			@Override
			public void refund(List<Acquisition> acquisitions, RateLimitResult decided) {
			}
		};
		AtomicLong ticker = new AtomicLong();
		FailoverRateLimitStore store = new FailoverRateLimitStore(dead, new InMemoryRateLimitStore(clock, 10), new FailoverSettings(0.5,
				new CircuitBreaker(1, 1_000_000_000L, ticker::get), new ThrottledLog(1, ticker::get),
				new ThrottledLog(1, ticker::get), (message) -> {
				}, (message) -> {
				}));
		RateLimitHealthIndicator indicator = new RateLimitHealthIndicator(() -> store);
		Health before = indicator.health();
		assertThat(before.getStatus()).isEqualTo(Status.UP);
		assertThat(before.getDetails()).containsEntry("fallbackActive", false).containsEntry("circuitBreaker", "CLOSED");
		store.tryAcquire(List.of(new Acquisition(RateLimit.of("a", Algorithm.TOKEN_BUCKET, 2, Duration.ofSeconds(1)),
				"user:a", 1)));
		Health during = indicator.health();
		assertThat(during.getStatus()).isEqualTo(Status.UP);
		assertThat(during.getDetails()).containsEntry("deciding", "fallback")
			.containsEntry("fallbackActive", true)
			.containsEntry("circuitBreaker", "OPEN");
	}

	@Test
	void namesTheInMemoryStore() {
		RateLimitHealthIndicator indicator = new RateLimitHealthIndicator(InMemoryRateLimitStore::new);
		assertThat(indicator.health().getDetails()).containsEntry("store", "memory").containsEntry("deciding", "memory");
	}

}
