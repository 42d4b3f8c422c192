package io.github.ratelimit.compat;

import io.github.ratelimit.store.AtomicStateStorage;
import io.github.ratelimit.store.contract.AtomicStateStorageContractTests;

/**
 * An application's own storage proven by the store contract kit, taken from ratelimit-core's
 * published test-jar: the whole suite runs on it for these few lines.
 */
class MapStateStorageConsumerTests extends AtomicStateStorageContractTests {

	@Override
	protected AtomicStateStorage createStorage() {
		return new MapStateStorage();
	}

}
