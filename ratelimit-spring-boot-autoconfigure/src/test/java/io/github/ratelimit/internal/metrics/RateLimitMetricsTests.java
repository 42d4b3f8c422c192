package io.github.ratelimit.internal.metrics;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.FailMode;
import io.github.ratelimit.internal.core.CircuitBreaker;
import io.github.ratelimit.internal.core.FailoverRateLimitStore;
import io.github.ratelimit.internal.core.FailoverSettings;
import io.github.ratelimit.internal.core.ObservedRateLimitStore;
import io.github.ratelimit.internal.core.RateLimiter;
import io.github.ratelimit.internal.core.ShareStore;
import io.github.ratelimit.internal.core.ThrottledLog;
import io.github.ratelimit.internal.local.LocalFirstRateLimitStore;
import io.github.ratelimit.internal.local.LocalFirstSettings;
import io.github.ratelimit.internal.memory.InMemoryRateLimitStore;
import io.github.ratelimit.store.Acquisition;
import io.github.ratelimit.store.MutableDecision;
import io.github.ratelimit.store.RateLimit;
import io.github.ratelimit.store.RateLimitResult;
import io.github.ratelimit.store.RateLimitStore;
import io.github.ratelimit.store.contract.MutableClock;

import static org.assertj.core.api.Assertions.assertThat;

class RateLimitMetricsTests {

	private final MeterRegistry registry = new SimpleMeterRegistry();

	private final MutableClock clock = new MutableClock(MutableClock.DEFAULT_START_MICROS);

	private final RateLimit orders = RateLimit.of("GET /orders/{id}", Algorithm.FIXED_WINDOW, 3, Duration.ofMinutes(1));

	@Test
	void countsAllowedAndRejectedRequestsPerLimitAndStore() {
		InMemoryRateLimitStore store = new InMemoryRateLimitStore(this.clock, 1000);
		RateLimiter limiter = new RateLimiter(store, new RateLimitMetrics(this.registry, () -> store, (limit) -> null));
		for (int i = 0; i < 5; i++) {
			limiter.acquire(List.of(new Acquisition(this.orders, "ip:203.0.113." + (i % 1), 1)));
		}
		assertThat(requests("allowed", "memory")).isEqualTo(3);
		assertThat(requests("rejected", "memory")).isEqualTo(2);
		// in-memory decisions are timed one in 64, at random: the timer exists from the first
		assertThat(this.registry.get("ratelimit.store.latency").tag("store", "memory").timer().count())
			.isLessThanOrEqualTo(5);
		assertThat(this.registry.get("ratelimit.buckets").tag("store", "memory").gauge().value()).isEqualTo(1);
		assertThat(this.registry.get("ratelimit.buckets.max").tag("store", "memory").gauge().value()).isEqualTo(1000);
		assertThat(this.registry.get("ratelimit.fallback.active").gauge().value()).isZero();
	}

	@Test
	void timesAboutOneInSixtyFourInMemoryDecisionsAndCountsEveryOne() {
		InMemoryRateLimitStore store = new InMemoryRateLimitStore(this.clock, 100_000);
		RateLimiter limiter = new RateLimiter(store, new RateLimitMetrics(this.registry, () -> store, (limit) -> null));
		RateLimit wide = RateLimit.of("GET /orders/{id}", Algorithm.FIXED_WINDOW, 1_000_000, Duration.ofMinutes(1));
		MutableDecision decision = new MutableDecision();
		for (int i = 0; i < 3_200; i++) {
			limiter.acquire(List.of(new Acquisition(wide, "ip:203.0.113.7", 1)));
			limiter.acquire(wide, "ip:203.0.113.7", 1, 0, decision);
		}
		assertThat(requests("allowed", "memory")).isEqualTo(6_400);
		// 100 expected; the bounds are more than seven standard deviations away
		assertThat(this.registry.get("ratelimit.store.latency").tag("store", "memory").timer().count())
			.isBetween(25L, 300L);
	}

	@Test
	void countsADecisionMadeInPlaceAsTheListPathCountsIt() {
		InMemoryRateLimitStore store = new InMemoryRateLimitStore(this.clock, 1000);
		RateLimiter limiter = new RateLimiter(store, new RateLimitMetrics(this.registry, () -> store, (limit) -> null));
		RateLimit shadow = new RateLimit("GET /orders/{id}", Algorithm.FIXED_WINDOW, 1, 1, Duration.ofMinutes(1),
				FailMode.OPEN, true);
		MutableDecision decision = new MutableDecision();
		for (int i = 0; i < 3; i++) {
			limiter.acquire(this.orders, "ip:203.0.113.7", 1, 0, decision);
		}
		limiter.acquire(this.orders, "ip:203.0.113.7", 1, 0, decision);
		assertThat(requests("allowed", "memory")).isEqualTo(3);
		assertThat(requests("rejected", "memory")).isEqualTo(1);
		limiter.acquire(shadow, "ip:203.0.113.8", 1, 0, decision);
		limiter.acquire(shadow, "ip:203.0.113.8", 1, 0, decision);
		assertThat(requests("allowed", "memory")).isEqualTo(4);
		assertThat(requests("shadow_rejected", "memory")).isEqualTo(1);
		assertThat(this.registry.find("ratelimit.store.latency").tag("store", "memory").timer()).isNotNull();
	}

	@Test
	void floodRejectedByOneLimitLeavesTheOtherLimitsAllowedCountStill() {
		InMemoryRateLimitStore store = new InMemoryRateLimitStore(this.clock, 100_000);
		RateLimiter limiter = new RateLimiter(store, new RateLimitMetrics(this.registry, () -> store, (limit) -> null));
		RateLimit perIp = RateLimit.of("login-ip", Algorithm.TOKEN_BUCKET, 10, Duration.ofMinutes(1));
		RateLimit perUsername = RateLimit.of("login-username", Algorithm.SLIDING_WINDOW_LOG, 5,
				Duration.ofMinutes(1));
		for (int i = 0; i < 1_010; i++) {
			limiter.acquire(List.of(new Acquisition(perIp, "ip:203.0.113.7", 1),
					new Acquisition(perUsername, "key:user" + i, 1)));
		}
		// the first ten charged both limits; login-ip rejected the other thousand, which so
		// took nothing from login-username although it had room for each of them
		assertThat(decisions("login-ip", "allowed")).isEqualTo(10);
		assertThat(decisions("login-ip", "rejected")).isEqualTo(1_000);
		assertThat(decisions("login-username", "allowed")).isEqualTo(10);
		assertThat(decisions("login-username", "not_charged")).isEqualTo(1_000);
		assertThat(this.registry.find("ratelimit.requests").tags("limit", "login-username", "result", "rejected").counter())
			.isNull();
	}

	@Test
	void aShadowLimitThatWouldAdmitARejectedRequestIsNotCharged() {
		InMemoryRateLimitStore store = new InMemoryRateLimitStore(this.clock, 1000);
		RateLimiter limiter = new RateLimiter(store, new RateLimitMetrics(this.registry, () -> store, (limit) -> null));
		RateLimit shadow = new RateLimit("search", Algorithm.TOKEN_BUCKET, 100, 100, Duration.ofMinutes(1),
				io.github.ratelimit.FailMode.OPEN, true);
		for (int i = 0; i < 5; i++) {
			limiter.acquire(List.of(new Acquisition(this.orders, "user:a", 1), new Acquisition(shadow, "user:a", 1)));
		}
		assertThat(decisions("search", "allowed")).isEqualTo(3);
		assertThat(decisions("search", "not_charged")).isEqualTo(2);
		assertThat(store.inspect(shadow, "user:a").remaining()).isEqualTo(97);
	}

	@Test
	void countsChargesGivenBackWhenALaterStageRejects() {
		InMemoryRateLimitStore store = new InMemoryRateLimitStore(this.clock, 1000);
		RateLimiter limiter = new RateLimiter(store, new RateLimitMetrics(this.registry, () -> store, (limit) -> null));
		RateLimit route = RateLimit.of("per-ip", Algorithm.TOKEN_BUCKET, 100, Duration.ofMinutes(1));
		RateLimit handler = RateLimit.of("reports", Algorithm.TOKEN_BUCKET, 1, Duration.ofMinutes(1));
		for (int i = 0; i < 3; i++) {
			List<Acquisition> firstStage = List.of(new Acquisition(route, "ip:203.0.113.7", 1));
			RateLimitResult admitted = limiter.acquire(firstStage);
			if (!limiter.acquire(List.of(new Acquisition(handler, "user:a", 1))).allowed()) {
				limiter.refund(firstStage, admitted);
			}
		}
		// three charges of per-ip, two of them given back: one stays
		assertThat(decisions("per-ip", "allowed")).isEqualTo(3);
		assertThat(this.registry.get("ratelimit.refunds").tags("limit", "per-ip", "store", "memory").counter().count())
			.isEqualTo(2);
		assertThat(store.inspect(route, "ip:203.0.113.7").remaining()).isEqualTo(99);
		assertThat(this.registry.find("ratelimit.refunds").tag("limit", "reports").counter()).isNull();
	}

	@Test
	void gaugesKeepReportingAfterGarbageCollection() {
		RateLimitMetrics metrics = new RateLimitMetrics(this.registry,
				() -> new InMemoryRateLimitStore(this.clock, 1000), (limit) -> null);
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
		RateLimiter limiter = new RateLimiter(store, new RateLimitMetrics(this.registry, () -> store, (limit) -> null));
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
	void decisionsTakenFromALocalFirstShareAreTaggedLocal() {
		InMemoryRateLimitStore shared = new InMemoryRateLimitStore(this.clock, 1000);
		LocalFirstRateLimitStore store = new LocalFirstRateLimitStore(shared, ShareStore.over(shared, this.clock),
				new LocalFirstSettings(this.clock, Duration.ofMillis(10), (limit) -> false, 100,
						new ThrottledLog(0, System::nanoTime), (message) -> {
						}));
		RateLimiter limiter = new RateLimiter(store, new RateLimitMetrics(this.registry, () -> store, (limit) -> null));
		RateLimit search = RateLimit.of("search", Algorithm.TOKEN_BUCKET, 100, Duration.ofMinutes(1));
		for (int i = 0; i < 10; i++) {
			assertThat(limiter.acquire(List.of(new Acquisition(search, "user:a", 1))).allowed()).isTrue();
		}
		double local = this.registry.get("ratelimit.requests").tag("limit", "search").tag("store", "local").counter().count();
		double sharedStore = this.registry.get("ratelimit.requests")
			.tag("limit", "search")
			.tag("store", "memory")
			.counter()
			.count();
		// the first requests ask the shared store for a share; the next ones spend it here
		assertThat(sharedStore).isPositive();
		assertThat(local).isPositive();
		assertThat(local + sharedStore).isEqualTo(10);
		assertThat(store.name()).isEqualTo("memory");
		store.close();
	}

	@Test
	void tagValuesNeverContainIdentities() {
		InMemoryRateLimitStore store = new InMemoryRateLimitStore(this.clock, 1000);
		RateLimiter limiter = new RateLimiter(store, new RateLimitMetrics(this.registry, () -> store, (limit) -> null));
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
				new ObservedRateLimitStore(primary, new io.github.ratelimit.store.RateLimitObserver() {
					@Override
					public void storeFailed(String name, Throwable failure) {
						metrics[0].storeFailed(name, failure);
					}
				}), fallback, new FailoverSettings(0.5, new CircuitBreaker(2, 1_000_000_000L, ticker::get),
				new ThrottledLog(1_000_000_000L, ticker::get), new ThrottledLog(1_000_000_000L, ticker::get),
				(message) -> {
				}, (message) -> {
				}));
		metrics[0] = new RateLimitMetrics(this.registry, () -> store, (limit) -> null);
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
		assertThat(this.registry.get("ratelimit.store.latency").tag("store", "redis").timer().count()).isEqualTo(1);
		assertThat(this.registry.get("ratelimit.store.latency").tag("store", "fallback").timer().count()).isEqualTo(3);
		// and back: each store's meters again, whichever decided last
		down.set(false);
		ticker.addAndGet(2_000_000_000L);
		limiter.acquire(List.of(new Acquisition(this.orders, "user:b", 1)));
		assertThat(requests("allowed", "redis")).isEqualTo(2);
		assertThat(requests("allowed", "fallback")).isEqualTo(1);
		assertThat(this.registry.get("ratelimit.store.latency").tag("store", "redis").timer().count()).isEqualTo(2);
		assertThat(this.registry.get("ratelimit.store.latency").tag("store", "fallback").timer().count()).isEqualTo(3);
	}

	private double decisions(String limit, String result) {
		return this.registry.get("ratelimit.requests")
			.tag("limit", limit)
			.tag("result", result)
			.tag("store", "memory")
			.counter()
			.count();
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
