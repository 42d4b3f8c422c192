package io.github.ratelimit.memory;

import io.github.ratelimit.core.MutableClock;
import io.github.ratelimit.core.PlanChangeContractTest;
import io.github.ratelimit.core.RateLimitStore;

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

}
