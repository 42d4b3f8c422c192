package io.github.ratelimit.internal.atomic;

import io.github.ratelimit.store.AtomicStateStorage;

class LockingMapStorageContractTests extends AtomicStateStorageContractTest {

	@Override
	protected AtomicStateStorage createStorage() {
		return new LockingMapStorage(() -> System.currentTimeMillis() * 1_000);
	}

}
