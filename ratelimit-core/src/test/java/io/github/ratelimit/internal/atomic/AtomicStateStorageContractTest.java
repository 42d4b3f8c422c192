package io.github.ratelimit.internal.atomic;

import io.github.ratelimit.internal.core.MutableClock;
import io.github.ratelimit.internal.core.RateLimitStoreContractTest;
import io.github.ratelimit.store.AtomicStateStorage;
import io.github.ratelimit.store.RateLimitStore;

/**
 * The store contract, run against the store that an {@link AtomicStateStorage} becomes: an
 * engine's storage test extends this class and creates its storage, empty. The store
 * decides at the test's clock instead of the storage's time.
 */
public abstract class AtomicStateStorageContractTest extends RateLimitStoreContractTest {

	/**
	 * Creates the storage under test, holding no state.
	 * @return the storage
	 */
	protected abstract AtomicStateStorage createStorage();

	@Override
	protected RateLimitStore createStore(MutableClock clock) {
		return AtomicStateRateLimitStore.builder(createStorage()).clock(clock).build();
	}

}
