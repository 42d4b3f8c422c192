package io.github.ratelimit.internal.atomic;

import io.github.ratelimit.store.AtomicStateStorage;

class CompareAndSetMapStorageContractTests extends AtomicStateStorageContractTest {

	@Override
	protected AtomicStateStorage createStorage() {
		return new CompareAndSetMapStorage();
	}

}
