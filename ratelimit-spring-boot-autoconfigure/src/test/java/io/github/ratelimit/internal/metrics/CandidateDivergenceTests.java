package io.github.ratelimit.internal.metrics;

import java.time.Duration;
import java.util.List;
import java.util.Map;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.FailMode;
import io.github.ratelimit.KeySource;
import io.github.ratelimit.internal.core.LimitDefinition;
import io.github.ratelimit.internal.core.LimitResolver;
import io.github.ratelimit.internal.core.LimitSettings;
import io.github.ratelimit.internal.core.RateLimiter;
import io.github.ratelimit.internal.memory.InMemoryRateLimitStore;
import io.github.ratelimit.store.RateLimitResult;
import io.github.ratelimit.store.contract.MutableClock;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A policy enforcing a fixed window, with a sliding window counter as its candidate: at
 * a window boundary the two disagree, and the divergence is counted exactly.
 */
class CandidateDivergenceTests {

	private static final long MINUTE = 60_000_000L;

	@Test
	void countsRequestsTheCandidateWouldNewlyReject() {
		MutableClock clock = new MutableClock(MutableClock.DEFAULT_START_MICROS);
		MeterRegistry registry = new SimpleMeterRegistry();
		InMemoryRateLimitStore store = new InMemoryRateLimitStore(clock, 1000);
		RateLimiter limiter = new RateLimiter(store, new RateLimitMetrics(registry, () -> store, (limit) -> null));
		LimitResolver resolver = LimitResolver.builder()
			.policies(Map.of("search",
					LimitSettings.builder()
						.algorithm(Algorithm.FIXED_WINDOW)
						.capacity(5L)
						.period(Duration.ofMinutes(1))
						.build()))
			.defaultKey(List.of(KeySource.IP))
			.candidates(Map.of("search", LimitSettings.builder().algorithm(Algorithm.SLIDING_WINDOW_COUNTER).build()))
			.build();
		LimitDefinition search = resolver.resolve("search", LimitSettings.EMPTY, "test");
		assertThat(search.candidate().name()).isEqualTo("search (candidate)");
		assertThat(search.candidate().shadow()).isTrue();
		// five at the end of one window, five at the start of the next
		clock.set(MutableClock.DEFAULT_START_MICROS + MINUTE - 1_000_000);
		for (int i = 0; i < 5; i++) {
			assertThat(limiter.acquire(search.acquisitions("ip:203.0.113.7")).allowed()).isTrue();
		}
		clock.set(MutableClock.DEFAULT_START_MICROS + MINUTE);
		for (int i = 0; i < 5; i++) {
			RateLimitResult result = limiter.acquire(search.acquisitions("ip:203.0.113.7"));
			assertThat(result.allowed()).as("the enforced fixed window admits the 2x boundary burst").isTrue();
			assertThat(result.decisions().get(1).allowed()).as("the candidate does not").isFalse();
		}
		assertThat(registry.get("ratelimit.shadow.divergence")
			.tag("limit", "search")
			.tag("direction", "newly_rejected")
			.counter()
			.count()).isEqualTo(5);
		assertThat(registry.find("ratelimit.shadow.divergence").tag("direction", "newly_allowed").counter()).isNull();
	}

}
