package io.github.ratelimit.internal.jdbc;

import org.junit.jupiter.api.BeforeAll;

import io.github.ratelimit.internal.atomic.AtomicStateStorageContractTest;
import io.github.ratelimit.store.AtomicStateStorage;

/**
 * The whole store contract, decided over a real PostgreSQL table.
 */
class JdbcStateStorageContractTests extends AtomicStateStorageContractTest {

	/**
	 * The storage's time in milliseconds: far behind the contract's clock, so that no
	 * state the contract writes expires by the database's time while the contract decides
	 * at its own, as the in-memory model storage does.
	 */
	private static final String CLOCK_BEHIND_THE_CONTRACT = "(extract(epoch from clock_timestamp()) * 1000)::bigint";

	private static JdbcStateStorage storage;

	@BeforeAll
	static void createTable() {
		storage = JdbcStateStorage.builder(PostgresTestServer.shared().dataSource())
			.table("ratelimit_contract")
			.clock(CLOCK_BEHIND_THE_CONTRACT)
			.build();
		storage.createSchema();
	}

	@Override
	protected AtomicStateStorage createStorage() {
		storage.deleteAll();
		return storage;
	}

}
