package io.github.ratelimit.internal.jdbc;

import org.junit.jupiter.api.BeforeAll;

import io.github.ratelimit.internal.atomic.AtomicStateStorageContractTest;
import io.github.ratelimit.store.AtomicStateStorage;

/**
 * The whole store contract, decided over a real PostgreSQL table.
 */
class JdbcStateStorageContractTests extends AtomicStateStorageContractTest {

	private static JdbcStateStorage storage;

	@BeforeAll
	static void createTable() {
		storage = JdbcStateStorage.builder(PostgresTestServer.shared().dataSource())
			.table("ratelimit_contract")
			.build();
		storage.createSchema();
	}

	@Override
	protected AtomicStateStorage createStorage() {
		storage.deleteAll();
		return storage;
	}

}
