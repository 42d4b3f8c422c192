package io.github.ratelimit.internal.metrics;

import java.time.Duration;
import java.util.List;
import java.util.Map;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.internal.core.RateLimiter;
import io.github.ratelimit.internal.core.SettledCosts;
import io.github.ratelimit.internal.memory.InMemoryRateLimitStore;
import io.github.ratelimit.store.Acquisition;
import io.github.ratelimit.store.MutableDecision;
import io.github.ratelimit.store.RateLimit;
import io.github.ratelimit.store.RateLimitResult;
import io.github.ratelimit.store.contract.MutableClock;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Limits that settle their cost after the call are measured in their own units: what calls
 * reserved, what they were charged, and the difference either way. Ordinary limits get no
 * cost meters.
 */
class SettledCostMetricsTests {

	private final MeterRegistry registry = new SimpleMeterRegistry();

	private final MutableClock clock = new MutableClock(MutableClock.DEFAULT_START_MICROS);

	private final InMemoryRateLimitStore store = new InMemoryRateLimitStore(this.clock, 1000);

	private final RateLimit tokens = RateLimit.of("chat-tokens", Algorithm.TOKEN_BUCKET, 1000, Duration.ofMinutes(1));

	private final RateLimit requests = RateLimit.of("chat-requests", Algorithm.TOKEN_BUCKET, 10,
			Duration.ofMinutes(1));

	private final RateLimiter limiter = new RateLimiter(this.store, new RateLimitMetrics(this.registry,
			() -> this.store, (limit) -> limit.equals("chat-tokens") ? "tokens" : null));

	@Test
	void countsReservedSettledReturnedAndOverdrawnUnitsInTheLimitsUnit() {
		settle(100, 40);
		settle(50, 80);
		settle(20, 20);
		assertThat(cost("ratelimit.cost.reserved")).isEqualTo(170);
		assertThat(cost("ratelimit.cost.settled")).isEqualTo(140);
		assertThat(cost("ratelimit.cost.returned")).isEqualTo(60);
		assertThat(cost("ratelimit.cost.overdrawn")).isEqualTo(30);
		assertThat(this.registry.get("ratelimit.cost.settled").tag("limit", "chat-tokens").counter().getId().getBaseUnit())
			.isEqualTo("tokens");
		assertThat(this.limiter.settledCosts().all())
			.isEqualTo(Map.of("chat-tokens", new SettledCosts.Totals(3, 170, 140, 60, 30)));
	}

	@Test
	void aLimitWithoutAUnitCountsRequests() {
		RateLimit exports = RateLimit.of("exports", Algorithm.FIXED_WINDOW, 100, Duration.ofMinutes(1));
		List<Acquisition> reserved = List.of(new Acquisition(exports, "user:alice", 10));
		this.limiter.settle(reserved, this.limiter.acquire(reserved), new long[] { 4 });
		assertThat(this.registry.get("ratelimit.cost.returned").tag("limit", "exports").counter().count()).isEqualTo(6);
		assertThat(this.registry.get("ratelimit.cost.returned").tag("limit", "exports").counter().getId().getBaseUnit())
			.isEqualTo("requests");
	}

	@Test
	void anOrdinaryLimitGetsNoCostMeters() {
		MutableDecision decision = new MutableDecision();
		for (int i = 0; i < 3; i++) {
			this.limiter.acquire(List.of(new Acquisition(this.requests, "user:alice", 1)));
			this.limiter.acquire(this.requests, "user:alice", 1, 0, decision);
		}
		List<Acquisition> refunded = List.of(new Acquisition(this.requests, "user:alice", 1));
		this.limiter.refund(refunded, this.limiter.acquire(refunded));
		assertThat(this.registry.get("ratelimit.requests").tag("limit", "chat-requests").counters()).isNotEmpty();
		assertThat(this.registry.find("ratelimit.cost.reserved").meters()).isEmpty();
		assertThat(this.registry.find("ratelimit.cost.settled").meters()).isEmpty();
		assertThat(this.registry.find("ratelimit.cost.returned").meters()).isEmpty();
		assertThat(this.registry.find("ratelimit.cost.overdrawn").meters()).isEmpty();
		assertThat(this.limiter.settledCosts().all()).isEmpty();
	}

	@Test
	void onlyTheLimitsThatSettleOfACallGetCostMeters() {
		List<Acquisition> call = List.of(new Acquisition(this.requests, "user:alice", 1),
				new Acquisition(this.tokens, "user:alice", 100));
		RateLimitResult decided = this.limiter.acquire(call);
		// the call settles its tokens only, as the limits that settle are what is settled
		this.limiter.settle(call.subList(1, 2), decided, new long[] { 30 });
		assertThat(cost("ratelimit.cost.settled")).isEqualTo(30);
		assertThat(this.registry.find("ratelimit.cost.settled").tag("limit", "chat-requests").meters()).isEmpty();
	}

	@Test
	void anAsyncSettlementIsCountedOnceTheStoreHasSettled() {
		List<Acquisition> reserved = List.of(new Acquisition(this.tokens, "user:alice", 100));
		RateLimitResult decided = this.limiter.acquire(reserved);
		this.limiter.settleAsync(reserved, decided, new long[] { 130 }).toCompletableFuture().join();
		assertThat(cost("ratelimit.cost.overdrawn")).isEqualTo(30);
		assertThat(this.limiter.settledCosts().of("chat-tokens"))
			.isEqualTo(new SettledCosts.Totals(1, 100, 130, 0, 30));
	}

	private void settle(long estimate, long actual) {
		List<Acquisition> reserved = List.of(new Acquisition(this.tokens, "user:alice", estimate));
		RateLimitResult decided = this.limiter.acquire(reserved);
		assertThat(decided.allowed()).isTrue();
		this.limiter.settle(reserved, decided, new long[] { actual });
	}

	private double cost(String name) {
		return this.registry.get(name).tag("limit", "chat-tokens").tag("store", "memory").counter().count();
	}

}
