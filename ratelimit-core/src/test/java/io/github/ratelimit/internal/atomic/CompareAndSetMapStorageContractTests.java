package io.github.ratelimit.internal.atomic;

import io.github.ratelimit.store.AtomicStateStorage;
import io.github.ratelimit.store.contract.AtomicStateStorageContractTests;

class CompareAndSetMapStorageContractTests extends AtomicStateStorageContractTests {

	@Override
	protected AtomicStateStorage createStorage() {
		return new CompareAndSetMapStorage();
	}

}
