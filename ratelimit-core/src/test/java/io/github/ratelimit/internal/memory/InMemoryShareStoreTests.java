package io.github.ratelimit.internal.memory;

import io.github.ratelimit.internal.core.ShareStore;
import io.github.ratelimit.internal.core.ShareStoreContractTest;
import io.github.ratelimit.store.RateLimitStore;
import io.github.ratelimit.store.contract.MutableClock;

/** The lease contract on the in-memory store through the two-step {@link ShareStore#over}. */
class InMemoryShareStoreTests extends ShareStoreContractTest {

	@Override
	protected RateLimitStore createStore(MutableClock clock) {
		return new InMemoryRateLimitStore(clock, 1_000);
	}

	@Override
	protected ShareStore sharing(RateLimitStore store) {
		return ShareStore.over(store, clock());
	}

}
