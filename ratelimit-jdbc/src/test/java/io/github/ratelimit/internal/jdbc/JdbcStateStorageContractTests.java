package io.github.ratelimit.internal.jdbc;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

import io.github.ratelimit.store.AtomicStateStorage;
import io.github.ratelimit.store.contract.AtomicStateStorageContractTests;

/**
 * The whole store contract, decided over a real PostgreSQL table, on a server of its own
 * so that the failover test can stop it and start it again.
 */
class JdbcStateStorageContractTests extends AtomicStateStorageContractTests {

	private static PostgresTestServer server;

	private static JdbcStateStorage storage;

	@BeforeAll
	static void createTable() {
		server = PostgresTestServer.create();
		storage = JdbcStateStorage.builder(server.dataSource()).table("ratelimit_contract").build();
		storage.createSchema();
	}

	@AfterAll
	static void stopServer() {
		server.close();
	}

	@Override
	protected AtomicStateStorage createStorage() {
		storage.deleteAll();
		return storage;
	}

	@Override
	protected void failStore() {
		server.stop();
	}

	@Override
	protected void recoverStore() {
		server.start();
	}

}
