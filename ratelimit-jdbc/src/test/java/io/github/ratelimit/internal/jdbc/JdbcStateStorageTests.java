package io.github.ratelimit.internal.jdbc;

import java.sql.Connection;
import java.time.Duration;
import java.util.List;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.SingleConnectionDataSource;

import io.github.ratelimit.store.AtomicStateStorage.Transaction;
import io.github.ratelimit.store.BucketKey;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/**
 * What the PostgreSQL storage does beyond the store contract: its table, its keys, its
 * time and its clean-up.
 */
class JdbcStateStorageTests {

	private static final String TABLE = "ratelimit_storage";

	private static final BucketKey KEY = new BucketKey("api", "alice");

	private static JdbcStateStorage storage;

	private static JdbcTemplate jdbc;

	@BeforeAll
	static void createTable() {
		storage = JdbcStateStorage.builder(PostgresTestServer.shared().dataSource())
			.table(TABLE)
			.timeout(Duration.ofMillis(1500))
			.build();
		storage.createSchema();
		jdbc = new JdbcTemplate(PostgresTestServer.shared().dataSource());
	}

	@BeforeEach
	void empty() {
		storage.deleteAll();
	}

	@Test
	void givesAConnectionBackWithTheNetworkTimeoutAndAutoCommitItLent() throws Exception {
		// a pool that restores nothing itself, unlike HikariCP
		SingleConnectionDataSource single = new SingleConnectionDataSource(PostgresTestServer.shared().jdbcUrl(),
				PostgresTestServer.USER, "", true);
		try {
			JdbcStateStorage plain = JdbcStateStorage.builder(single).table(TABLE).timeout(Duration.ofMillis(700)).build();
			plain.update(List.of(new BucketKey("lent", "alice")), (transaction) -> {
				transaction.write(0, new byte[] { 1 }, Long.MAX_VALUE);
				return null;
			});
			Connection connection = single.getConnection();
			assertThat(connection.getNetworkTimeout()).isZero();
			assertThat(connection.getAutoCommit()).isTrue();
		}
		finally {
			single.destroy();
		}
	}

	@Test
	void isNamedJdbc() {
		assertThat(storage.name()).isEqualTo("jdbc");
	}

	@Test
	void acceptsPlainAndSchemaQualifiedTableNames() {
		JdbcStateStorage.Builder builder = JdbcStateStorage.builder(PostgresTestServer.shared().dataSource());
		assertThat(builder.table("limits").build().table()).isEqualTo("limits");
		assertThat(builder.table("app_1.Rate_Limits").build().table()).isEqualTo("app_1.Rate_Limits");
	}

	@Test
	void refusesTableNamesThatAreNotPlainIdentifiers() {
		JdbcStateStorage.Builder builder = JdbcStateStorage.builder(PostgresTestServer.shared().dataSource());
		for (String name : List.of("", "1table", "bucket; DROP TABLE users", "a.b.c", "\"quoted\"", "a-b", "a b",
				"schema.", ".table")) {
			assertThatIllegalArgumentException().isThrownBy(() -> builder.table(name))
				.withMessageContaining("table must be a plain SQL identifier")
				.withMessageContaining(name);
		}
	}

	@Test
	void createsTheSchemaIdempotently() {
		storage.createSchema();
		storage.createSchema();
		// the primary key only: an index on expires_at would keep every write from being heap-only
		assertThat(jdbc.queryForObject("SELECT count(*) FROM pg_indexes WHERE tablename = ?", Long.class, TABLE))
			.isEqualTo(1);
	}

	@Test
	void createsTheSchemaInAnotherSchema() {
		jdbc.execute("CREATE SCHEMA IF NOT EXISTS ratelimit_other");
		JdbcStateStorage other = JdbcStateStorage.builder(PostgresTestServer.shared().dataSource())
			.table("ratelimit_other.buckets")
			.build();
		other.createSchema();
		other.update(List.of(KEY), (transaction) -> {
			transaction.write(0, new byte[] { 1 }, transaction.nowMicros() + 60_000_000);
			return null;
		});
		assertThat(other.size()).isOne();
		assertThat(storage.size()).isZero();
	}

	@Test
	void hashesKeysSoThatSeparatorsInNamesCannotCollide() {
		byte[] first = JdbcStateStorage.id(new BucketKey("a", "b|c"));
		byte[] second = JdbcStateStorage.id(new BucketKey("a|b", "c"));
		byte[] third = JdbcStateStorage.id(new BucketKey("ab", "c"));
		byte[] fourth = JdbcStateStorage.id(new BucketKey("a", "bc"));
		assertThat(first).hasSize(32);
		assertThat(List.of(first, second, third, fourth)).doesNotHaveDuplicates();
		assertThat(first).isNotEqualTo(second);
		assertThat(third).isNotEqualTo(fourth);
		assertThat(JdbcStateStorage.id(new BucketKey("a", "b|c"))).isEqualTo(first);
	}

	@Test
	void keepsWhatOneUpdateWroteForTheNext() {
		long written = storage.update(List.of(KEY), (transaction) -> {
			assertThat(transaction.state(0)).isNull();
			transaction.write(0, new byte[] { 7, 8 }, transaction.nowMicros() + 60_000_000);
			return transaction.nowMicros();
		});
		long now = storage.update(List.of(KEY), (transaction) -> {
			assertThat(transaction.state(0)).containsExactly(7, 8);
			return transaction.nowMicros();
		});
		assertThat(now).isGreaterThanOrEqualTo(written);
	}

	@Test
	void writesSeveralKeysInOneStepAndOnlyThoseWritten() {
		List<BucketKey> keys = List.of(new BucketKey("a", "x"), new BucketKey("b", "x"), new BucketKey("c", "x"));
		storage.update(keys, (transaction) -> {
			transaction.write(0, new byte[] { 1 }, transaction.nowMicros() + 60_000_000);
			transaction.write(2, new byte[] { 3 }, transaction.nowMicros() + 60_000_000);
			return null;
		});
		storage.update(keys, (transaction) -> {
			assertThat(transaction.state(0)).containsExactly(1);
			assertThat(transaction.state(1)).isNull();
			assertThat(transaction.state(2)).containsExactly(3);
			transaction.write(1, new byte[] { 2 }, transaction.nowMicros() + 60_000_000);
			return null;
		});
		storage.read(keys, (transaction) -> {
			assertThat(transaction.state(0)).containsExactly(1);
			assertThat(transaction.state(1)).containsExactly(2);
			assertThat(transaction.state(2)).containsExactly(3);
			return null;
		});
	}

	@Test
	void writesNothingWhenTheBodyFails() {
		try {
			storage.update(List.of(KEY), (transaction) -> {
				transaction.write(0, new byte[] { 1 }, transaction.nowMicros() + 60_000_000);
				throw new IllegalStateException("decided nothing");
			});
		}
		catch (IllegalStateException expected) {
			// the row the step created is rolled back with it
		}
		assertThat(storage.size()).isZero();
	}

	@Test
	void readsAnExpiredRowAsAFreshBucket() {
		storage.update(List.of(KEY), (transaction) -> {
			transaction.write(0, new byte[] { 1 }, transaction.nowMicros() - 1);
			return null;
		});
		assertThat(storage.size()).isOne();
		storage.update(List.of(KEY), (transaction) -> {
			assertThat(transaction.state(0)).isNull();
			return null;
		});
		storage.read(List.of(KEY), (transaction) -> {
			assertThat(transaction.state(0)).isNull();
			return null;
		});
		assertThat(storage.delete(KEY)).isFalse();
	}

	@Test
	void readCreatesNoRowAndKeepsNoWrite() {
		long now = storage.read(List.of(KEY), (transaction) -> {
			assertThat(transaction.state(0)).isNull();
			transaction.write(0, new byte[] { 1 }, transaction.nowMicros() + 60_000_000);
			return transaction.nowMicros();
		});
		assertThat(now).isCloseTo(System.currentTimeMillis() * 1000, org.assertj.core.data.Offset.offset(600_000_000L));
		assertThat(storage.size()).isZero();
	}

	@Test
	void deleteSaysWhetherAStateWasHeld() {
		assertThat(storage.delete(KEY)).isFalse();
		storage.update(List.of(KEY), (transaction) -> {
			transaction.write(0, new byte[] { 1 }, transaction.nowMicros() + 60_000_000);
			return null;
		});
		assertThat(storage.delete(KEY)).isTrue();
		assertThat(storage.size()).isZero();
		assertThat(storage.delete(KEY)).isFalse();
	}

	@Test
	void removesExpiredRowsInBatchesAndKeepsTheOthers() {
		for (int i = 0; i < 25; i++) {
			BucketKey key = new BucketKey("api", "expired-" + i);
			storage.update(List.of(key), (transaction) -> {
				transaction.write(0, new byte[] { 1 }, transaction.nowMicros() - 1);
				return null;
			});
		}
		storage.update(List.of(KEY), (transaction) -> {
			transaction.write(0, new byte[] { 1 }, transaction.nowMicros() + 60_000_000);
			return null;
		});
		assertThat(storage.removeExpired(10)).isEqualTo(10);
		assertThat(storage.removeExpired(10)).isEqualTo(10);
		assertThat(storage.removeExpired(10)).isEqualTo(5);
		assertThat(storage.removeExpired(10)).isZero();
		assertThat(storage.size()).isOne();
		assertThatIllegalArgumentException().isThrownBy(() -> storage.removeExpired(0))
			.withMessage("batchSize must be positive: 0");
	}

	@Test
	void removingExpiredRowsSkipsRowsADecisionHolds() throws Exception {
		storage.update(List.of(KEY), (transaction) -> {
			transaction.write(0, new byte[] { 1 }, transaction.nowMicros() - 1);
			return null;
		});
		int removedMeanwhile = storage.update(List.of(KEY), (Transaction transaction) -> {
			// the row is locked by this step: clean-up on another connection passes it by
			return java.util.concurrent.CompletableFuture.supplyAsync(() -> storage.removeExpired(100)).join();
		});
		assertThat(removedMeanwhile).isZero();
		assertThat(storage.removeExpired(100)).isOne();
	}

	@Test
	void roundsTheStatementTimeoutUpToWholeSeconds() {
		assertThat(JdbcStateStorage.seconds(Duration.ofMillis(1))).isEqualTo(1);
		assertThat(JdbcStateStorage.seconds(Duration.ofSeconds(2))).isEqualTo(2);
		assertThat(JdbcStateStorage.seconds(Duration.ofMillis(2001))).isEqualTo(3);
		assertThatIllegalArgumentException()
			.isThrownBy(() -> JdbcStateStorage.builder(PostgresTestServer.shared().dataSource())
				.timeout(Duration.ZERO))
			.withMessage("timeout must be positive: PT0S");
	}

}
