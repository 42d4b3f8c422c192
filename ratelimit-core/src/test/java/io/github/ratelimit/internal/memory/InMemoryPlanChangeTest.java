package io.github.ratelimit.internal.memory;

import java.time.Duration;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.KeySource;
import io.github.ratelimit.internal.core.LimitDefinition;
import io.github.ratelimit.internal.core.PlanChangeContractTest;
import io.github.ratelimit.store.RateLimit;
import io.github.ratelimit.store.RateLimitStore;
import io.github.ratelimit.store.contract.MutableClock;

import static org.assertj.core.api.Assertions.assertThat;

class InMemoryPlanChangeTest extends PlanChangeContractTest {

	private InMemoryRateLimitStore store;

	@Override
	protected RateLimitStore createStore(MutableClock clock) {
		this.store = new InMemoryRateLimitStore(clock, InMemoryRateLimitStore.DEFAULT_MAXIMUM_KEYS);
		return this.store;
	}

	@Override
	protected long bucketCount() {
		return this.store.size();
	}

	@Test
	void bucketIsKeptAsLongAsItsLongestPlanNeedsIt() {
		// free: 10 a second, forgotten 2s after its last use; pro: one token a second for 100s
		RateLimit free = new RateLimit("api", Algorithm.TOKEN_BUCKET, 10, 0, Duration.ofSeconds(1));
		RateLimit pro = new RateLimit("api", Algorithm.TOKEN_BUCKET, 100, 0, Duration.ofSeconds(100));
		LimitDefinition api = LimitDefinition.builder(free)
			.key(List.of(KeySource.PRINCIPAL))
			.plans(Map.of("pro", pro))
			.build();
		assertThat(acquire(api, null)).isEqualTo(9);
		for (int i = 1; i <= 50; i++) {
			// the free token re-priced at the pro interval, then one more per request
			assertThat(acquire(api, "pro")).isEqualTo(99 - i);
		}
		clock().advance(Duration.ofSeconds(5));
		// 46 tokens still owed; a bucket forgotten after the free plan's 2s would answer 99
		assertThat(acquire(api, "pro")).isEqualTo(53);
	}

	private long acquire(LimitDefinition definition, String plan) {
		return this.store.tryAcquire(definition.acquisitions("user:alice", plan)).decisions().get(0).remaining();
	}

}
