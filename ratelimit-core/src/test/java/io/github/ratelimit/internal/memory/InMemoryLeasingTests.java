package io.github.ratelimit.internal.memory;

import io.github.ratelimit.internal.core.LeasingStore;
import io.github.ratelimit.internal.core.LeasingStoreContractTest;
import io.github.ratelimit.internal.core.MutableClock;
import io.github.ratelimit.store.RateLimitStore;

/** The lease contract on the in-memory store through the two-step {@link LeasingStore#over}. */
class InMemoryLeasingTests extends LeasingStoreContractTest {

	@Override
	protected RateLimitStore createStore(MutableClock clock) {
		return new InMemoryRateLimitStore(clock, 1_000);
	}

	@Override
	protected LeasingStore leasing(RateLimitStore store) {
		return LeasingStore.over(store, clock());
	}

}
