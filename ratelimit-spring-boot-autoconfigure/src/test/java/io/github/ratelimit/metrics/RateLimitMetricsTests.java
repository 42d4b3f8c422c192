package io.github.ratelimit.metrics;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.core.Acquisition;
import io.github.ratelimit.core.CircuitBreaker;
import io.github.ratelimit.core.FailoverRateLimitStore;
import io.github.ratelimit.core.MutableClock;
import io.github.ratelimit.core.ObservedRateLimitStore;
import io.github.ratelimit.core.RateLimit;
import io.github.ratelimit.core.RateLimitResult;
import io.github.ratelimit.core.RateLimitStore;
import io.github.ratelimit.core.RateLimiter;
import io.github.ratelimit.core.ThrottledLog;
import io.github.ratelimit.memory.InMemoryRateLimitStore;

import static org.assertj.core.api.Assertions.assertThat;

class RateLimitMetricsTests {

	private final MeterRegistry registry = new SimpleMeterRegistry();

	private final MutableClock clock = new MutableClock(MutableClock.DEFAULT_START_MICROS);

	private final RateLimit orders = RateLimit.of("GET /orders/{id}", Algorithm.FIXED_WINDOW, 3, Duration.ofMinutes(1));

	@Test
	void countsAllowedAndRejectedRequestsPerLimitAndStore() {
		InMemoryRateLimitStore store = new InMemoryRateLimitStore(this.clock, 1000);
		RateLimiter limiter = new RateLimiter(store, new RateLimitMetrics(this.registry, () -> store));
		for (int i = 0; i < 5; i++) {
			limiter.acquire(List.of(new Acquisition(this.orders, "ip:203.0.113." + (i % 1), 1)));
		}
		assertThat(requests("allowed", "memory")).isEqualTo(3);
		assertThat(requests("rejected", "memory")).isEqualTo(2);
		assertThat(this.registry.get("ratelimit.store.latency").tag("store", "memory").timer().count()).isEqualTo(5);
		assertThat(this.registry.get("ratelimit.buckets").tag("store", "memory").gauge().value()).isEqualTo(1);
		assertThat(this.registry.get("ratelimit.buckets.max").tag("store", "memory").gauge().value()).isEqualTo(1000);
		assertThat(this.registry.get("ratelimit.fallback.active").gauge().value()).isZero();
	}

	@Test
	void gaugesKeepReportingAfterGarbageCollection() {
		RateLimitMetrics metrics = new RateLimitMetrics(this.registry,
				() -> new InMemoryRateLimitStore(this.clock, 1000));
		assertThat(metrics).isNotNull();
		for (int i = 0; i < 3; i++) {
			System.gc();
		}
		assertThat(this.registry.get("ratelimit.buckets.max").tag("store", "memory").gauge().value()).isEqualTo(1000);
		assertThat(this.registry.get("ratelimit.fallback.active").gauge().value()).isZero();
	}

	@Test
	void countsWhatAShadowLimitWouldHaveRejected() {
		InMemoryRateLimitStore store = new InMemoryRateLimitStore(this.clock, 1000);
		RateLimiter limiter = new RateLimiter(store, new RateLimitMetrics(this.registry, () -> store));
		RateLimit shadow = new RateLimit("search", Algorithm.SLIDING_WINDOW_LOG, 2, 2, Duration.ofMinutes(1),
				io.github.ratelimit.FailMode.OPEN, true);
		for (int i = 0; i < 7; i++) {
			assertThat(limiter.acquire(List.of(new Acquisition(shadow, "user:a", 1))).allowed()).isTrue();
		}
		assertThat(this.registry.get("ratelimit.requests").tag("limit", "search").tag("result", "allowed").counter().count())
			.isEqualTo(2);
		assertThat(this.registry.get("ratelimit.requests")
			.tag("limit", "search")
			.tag("result", "shadow_rejected")
			.counter()
			.count()).isEqualTo(5);
		assertThat(this.registry.find("ratelimit.requests").tag("result", "rejected").counter()).isNull();
	}

	@Test
	void tagValuesNeverContainIdentities() {
		InMemoryRateLimitStore store = new InMemoryRateLimitStore(this.clock, 1000);
		RateLimiter limiter = new RateLimiter(store, new RateLimitMetrics(this.registry, () -> store));
		for (int i = 0; i < 50; i++) {
			limiter.acquire(List.of(new Acquisition(this.orders, "user:alice" + i, 1)));
		}
		List<String> tagValues = this.registry.getMeters()
			.stream()
			.map(Meter::getId)
			.flatMap((id) -> id.getTags().stream())
			.map((tag) -> tag.getValue())
			.distinct()
			.toList();
		assertThat(tagValues).containsOnly("GET /orders/{id}", "allowed", "memory", "fallback");
	}

	@Test
	void failingRemoteStoreCountsErrorsAndReportsTheFallback() {
		AtomicBoolean down = new AtomicBoolean();
		RateLimitStore primaryMemory = new InMemoryRateLimitStore(this.clock, 1000);
		RateLimitStore primary = new RateLimitStore() {
			@Override
			public RateLimitResult tryAcquire(List<Acquisition> acquisitions, long maxDelayMicros) {
				if (down.get()) {
					throw new IllegalStateException("connection refused");
				}
				return primaryMemory.tryAcquire(acquisitions).decidedBy(RateLimitResult.REDIS);
			}

			@Override
			public String name() {
				return RateLimitResult.REDIS;
			}

			@Override
			public void refund(List<Acquisition> acquisitions, RateLimitResult decided) {
			}
		};
		AtomicLong ticker = new AtomicLong();
		InMemoryRateLimitStore fallback = new InMemoryRateLimitStore(this.clock, 500);
		RateLimitMetrics[] metrics = new RateLimitMetrics[1];
		FailoverRateLimitStore store = new FailoverRateLimitStore(
				new ObservedRateLimitStore(primary, new io.github.ratelimit.core.RateLimitObserver() {
					@Override
					public void storeFailed(String name, Throwable failure) {
						metrics[0].storeFailed(name, failure);
					}
				}), fallback, 0.5, new CircuitBreaker(2, 1_000_000_000L, ticker::get),
				new ThrottledLog(1_000_000_000L, ticker::get), new ThrottledLog(1_000_000_000L, ticker::get),
				(message) -> {
				}, (message) -> {
				});
		metrics[0] = new RateLimitMetrics(this.registry, () -> store);
		RateLimiter limiter = new RateLimiter(store, metrics[0]);
		limiter.acquire(List.of(new Acquisition(this.orders, "user:a", 1)));
		assertThat(requests("allowed", "redis")).isEqualTo(1);
		down.set(true);
		for (int i = 0; i < 3; i++) {
			limiter.acquire(List.of(new Acquisition(this.orders, "user:a", 1)));
		}
		// capacity 3 at factor 0.5 is 1 in the fallback
		assertThat(requests("allowed", "fallback")).isEqualTo(1);
		assertThat(requests("rejected", "fallback")).isEqualTo(2);
		// the breaker opened after two failures: the third request did not call Redis
		assertThat(this.registry.get("ratelimit.store.errors").tag("store", "redis").counter().count()).isEqualTo(2);
		assertThat(this.registry.get("ratelimit.fallback.active").gauge().value()).isEqualTo(1);
		assertThat(this.registry.get("ratelimit.buckets").tag("store", "fallback").gauge().value()).isEqualTo(1);
		assertThat(this.registry.get("ratelimit.buckets.max").tag("store", "fallback").gauge().value()).isEqualTo(500);
	}

	private double requests(String result, String store) {
		return this.registry.get("ratelimit.requests")
			.tag("limit", "GET /orders/{id}")
			.tag("result", result)
			.tag("store", store)
			.counter()
			.count();
	}

}
