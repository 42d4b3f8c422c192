package io.github.ratelimit.internal.memory;

import java.util.List;

import io.github.ratelimit.store.RateLimitStore;
import io.github.ratelimit.store.contract.MutableClock;
import io.github.ratelimit.store.contract.SettleUnderConcurrencyTests;

/**
 * Reserve, then settle, with 64 threads on one in-memory store: usage within the limit
 * (or the bound), and nothing left reserved.
 */
class InMemorySettleUnderConcurrencyTests extends SettleUnderConcurrencyTests {

	@Override
	protected List<RateLimitStore> createInstances(MutableClock clock) {
		return List.of(new InMemoryRateLimitStore(clock, 1_000));
	}

}
