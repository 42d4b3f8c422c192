package io.github.ratelimit.internal.jdbc;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

import org.springframework.jdbc.core.JdbcTemplate;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.store.Acquisition;
import io.github.ratelimit.store.RateLimit;
import io.github.ratelimit.store.RateLimitStore;
import io.github.ratelimit.store.RateLimitStores;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The table stays bounded: a flood of one-off identities leaves a row each, and once
 * their states expire, {@link JdbcStateStorage#removeExpired} in batches leaves none. The
 * sizes are printed for the documentation.
 */
class JdbcStorageBoundTests {

	private static final String TABLE = "ratelimit_bound";

	private static final int IDENTITIES = 200_000;

	/**
	 * Decided one by one through the store; the rest are inserted as the same rows. A build
	 * decides 20,000; {@code -Dratelimit.bound.decided=200000} decides every identity, as the
	 * figures in the documentation were measured.
	 */
	private static final int DECIDED = Math.min(IDENTITIES, Integer.getInteger("ratelimit.bound.decided", 20_000));

	private static final int THREADS = 8;

	@Test
	void removingExpiredRowsEmptiesTheTableAfterAFloodOfIdentities() throws Exception {
		PostgresTestServer server = PostgresTestServer.shared();
		JdbcStateStorage storage = JdbcStateStorage.builder(server.newDataSource(THREADS, Duration.ofSeconds(30))).table(TABLE).build();
		storage.createSchema();
		storage.deleteAll();
		JdbcTemplate jdbc = new JdbcTemplate(server.dataSource());
		RateLimit limit = RateLimit.of("flood", Algorithm.TOKEN_BUCKET, 10, Duration.ofSeconds(1));
		RateLimitStore store = RateLimitStores.atomic(storage, Duration.ofSeconds(10), THREADS);

		long began = System.nanoTime();
		decide(store, limit);
		long decidedMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - began);
		// the others stand for the same requests: the row a decision writes, under other ids
		jdbc.update("INSERT INTO " + TABLE + " (id, state, expires_at) SELECT sha256(convert_to('flood', 'UTF8') "
				+ "|| '\\x00'::bytea || convert_to('inserted-' || n, 'UTF8')), s.state, s.expires_at "
				+ "FROM generate_series(1, ?) AS n, (SELECT state, expires_at FROM " + TABLE + " LIMIT 1) AS s",
				IDENTITIES - DECIDED);
		long rowsBefore = storage.size();
		long bytesBefore = tableBytes(jdbc);
		assertThat(rowsBefore).isEqualTo(IDENTITIES);

		awaitExpiry(jdbc);
		long cleaning = System.nanoTime();
		int batches = 0;
		while (storage.removeExpired(1000) > 0 && batches < IDENTITIES) {
			batches++;
		}
		long cleanedMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - cleaning);
		long rowsAfter = storage.size();
		long bytesAfter = tableBytes(jdbc);
		jdbc.execute("VACUUM " + TABLE);
		long bytesVacuumed = tableBytes(jdbc);
		assertThat(rowsAfter).isZero();
		System.out.printf("%d identities (%d decided in %d ms on %d threads): %d rows, %d bytes "
				+ "(pg_total_relation_size); removeExpired(1000) x %d in %d ms: %d rows, %d bytes; "
				+ "after VACUUM %d bytes%n", IDENTITIES, DECIDED, decidedMillis, THREADS, rowsBefore, bytesBefore,
				batches, cleanedMillis, rowsAfter, bytesAfter, bytesVacuumed);
		((AutoCloseable) store).close();
	}

	private static void decide(RateLimitStore store, RateLimit limit) throws Exception {
		ExecutorService pool = Executors.newFixedThreadPool(THREADS);
		try {
			List<Future<?>> callers = new ArrayList<>();
			for (int thread = 0; thread < THREADS; thread++) {
				int first = thread;
				callers.add(pool.submit(() -> {
					for (int i = first; i < DECIDED; i += THREADS) {
						assertThat(store.tryAcquire(List.of(new Acquisition(limit, "identity-" + i, 1))).allowed())
							.isTrue();
					}
					return null;
				}));
			}
			for (Future<?> caller : callers) {
				caller.get(120, TimeUnit.SECONDS);
			}
		}
		finally {
			pool.shutdownNow();
		}
	}

	/** Waits, in the database's time, until every state has expired. */
	private static void awaitExpiry(JdbcTemplate jdbc) throws InterruptedException {
		for (int i = 0; i < 600; i++) {
			Long waitMicros = jdbc.queryForObject("SELECT max(expires_at) - " + JdbcStatements.DATABASE_CLOCK
					+ " FROM " + TABLE, Long.class);
			if (waitMicros == null || waitMicros < 0) {
				return;
			}
			Thread.sleep(Math.min(100, waitMicros / 1000 + 1));
		}
		throw new IllegalStateException("The states did not expire within a minute");
	}

	private static long tableBytes(JdbcTemplate jdbc) {
		Long bytes = jdbc.queryForObject("SELECT pg_total_relation_size(?::regclass)", Long.class, TABLE);
		return (bytes != null) ? bytes : -1;
	}

}
