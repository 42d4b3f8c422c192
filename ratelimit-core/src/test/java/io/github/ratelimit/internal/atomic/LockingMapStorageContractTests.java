package io.github.ratelimit.internal.atomic;

import io.github.ratelimit.store.AtomicStateStorage;
import io.github.ratelimit.store.contract.AtomicStateStorageContractTests;

class LockingMapStorageContractTests extends AtomicStateStorageContractTests {

	private LockingMapStorage storage;

	@Override
	protected AtomicStateStorage createStorage() {
		this.storage = new LockingMapStorage(() -> System.currentTimeMillis() * 1_000);
		return this.storage;
	}

	@Override
	protected void failStore() {
		this.storage.failing(true);
	}

	@Override
	protected void recoverStore() {
		this.storage.failing(false);
	}

}
