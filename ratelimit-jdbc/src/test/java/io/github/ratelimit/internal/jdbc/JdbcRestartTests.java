package io.github.ratelimit.internal.jdbc;

import java.time.Duration;
import java.util.List;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.store.Acquisition;
import io.github.ratelimit.store.RateLimit;
import io.github.ratelimit.store.RateLimitResult;
import io.github.ratelimit.store.RateLimitStore;
import io.github.ratelimit.store.RateLimitStores;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The database stopped under a failover store and started again: callers never see an
 * exception, the fallback decides meanwhile, and the database decides again once back.
 */
class JdbcRestartTests {

	private static final RateLimit LIMIT = RateLimit.of("api", Algorithm.TOKEN_BUCKET, 1000, Duration.ofMinutes(1));

	private static final List<Acquisition> REQUEST = List.of(new Acquisition(LIMIT, "client", 1));

	/** Generous: a call is bounded by the store's timeout, not measured here. */
	private static final long MAX_CALL_NANOS = Duration.ofSeconds(5).toNanos();

	private PostgresTestServer server;

	private RateLimitStore atomic;

	private RateLimitStore store;

	@BeforeEach
	void start() {
		this.server = PostgresTestServer.create();
		JdbcStateStorage storage = JdbcStateStorage.builder(this.server.newDataSource(8)).build();
		storage.createSchema();
		this.atomic = RateLimitStores.atomic(storage, Duration.ofMillis(500), 8);
		this.store = RateLimitStores.builder(this.atomic)
			.fallback(RateLimitStores.inMemory(1000), 1.0)
			.circuitBreaker(2, Duration.ofMillis(200))
			.build();
	}

	@AfterEach
	void stop() throws Exception {
		((AutoCloseable) this.atomic).close();
		this.server.close();
	}

	@Test
	void fallsBackWhileTheDatabaseIsDownAndReturnsWhenItIsBack() {
		for (int i = 0; i < 3; i++) {
			assertThat(decide().store()).isEqualTo("jdbc");
		}

		this.server.stop();
		for (int i = 0; i < 10; i++) {
			RateLimitResult result = decide();
			assertThat(result.store()).isEqualTo(RateLimitResult.FALLBACK);
			assertThat(result.allowed()).isTrue();
		}

		this.server.start();
		String decidedBy = null;
		for (int attempt = 0; attempt < 150 && !"jdbc".equals(decidedBy); attempt++) {
			decidedBy = decide().store();
			if (!"jdbc".equals(decidedBy)) {
				pause();
			}
		}
		assertThat(decidedBy).isEqualTo("jdbc");
	}

	/** One call, which must answer without an exception and in bounded time. */
	private RateLimitResult decide() {
		long began = System.nanoTime();
		RateLimitResult result = this.store.tryAcquire(REQUEST);
		assertThat(System.nanoTime() - began).isLessThan(MAX_CALL_NANOS);
		return result;
	}

	/** Lets the circuit breaker's probe interval pass: real time, as the database's. */
	private static void pause() {
		try {
			Thread.sleep(100);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
	}

}
