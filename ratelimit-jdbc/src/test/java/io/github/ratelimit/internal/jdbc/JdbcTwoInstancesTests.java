package io.github.ratelimit.internal.jdbc;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
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
 * Two application instances, each with its own pool and its own store, deciding one hot
 * bucket in the same database at once: the row locks make them admit exactly what the
 * bucket holds, and a request with several limits is charged on all of them or none.
 */
class JdbcTwoInstancesTests {

	private static final int CALLERS_PER_INSTANCE = 32;

	private static final int ATTEMPTS_PER_CALLER = 20;

	/** Long enough that no token refills while the callers run: the counts are exact. */
	private static final Duration PERIOD = Duration.ofDays(1);

	private static final List<RateLimitStore> instances = new ArrayList<>();

	private static JdbcStateStorage storage;

	@BeforeAll
	static void startInstances() {
		PostgresTestServer server = PostgresTestServer.shared();
		for (int i = 0; i < 2; i++) {
			JdbcStateStorage instance = JdbcStateStorage.builder(server.newDataSource(CALLERS_PER_INSTANCE, Duration.ofSeconds(30)))
				.table("ratelimit_instances")
				.build();
			instance.createSchema();
			// as many store threads as callers, as ratelimit.jdbc.threads is sized
			instances.add(RateLimitStores.atomic(instance, Duration.ofSeconds(30), CALLERS_PER_INSTANCE));
			storage = instance;
		}
	}

	@AfterAll
	static void stopInstances() throws Exception {
		for (RateLimitStore instance : instances) {
			if (instance instanceof AutoCloseable closeable) {
				closeable.close();
			}
		}
	}

	@BeforeEach
	void empty() {
		storage.deleteAll();
	}

	@Test
	void admitsExactlyTheCapacityOfAHotBucketAcrossTwoInstances() throws Exception {
		RateLimit limit = RateLimit.of("hot", Algorithm.TOKEN_BUCKET, 500, PERIOD);
		int admitted = hammer(List.of(limit));
		assertThat(admitted).isEqualTo(500);
		assertThat(remaining(limit)).isZero();
	}

	@Test
	void chargesEveryLimitOfARequestOrNoneAcrossTwoInstances() throws Exception {
		List<RateLimit> limits = List.of(RateLimit.of("per-user", Algorithm.TOKEN_BUCKET, 500, PERIOD),
				RateLimit.of("per-tenant", Algorithm.TOKEN_BUCKET, 400, PERIOD),
				RateLimit.of("global", Algorithm.TOKEN_BUCKET, 450, PERIOD));
		int admitted = hammer(limits);
		assertThat(admitted).isEqualTo(400);
		for (RateLimit limit : limits) {
			assertThat(limit.capacity() - remaining(limit)).as(limit.name()).isEqualTo(admitted);
		}
	}

	/** Sends every caller's attempts at once; answers how many requests were admitted. */
	private static int hammer(List<RateLimit> limits) throws Exception {
		List<Acquisition> request = limits.stream().map((limit) -> new Acquisition(limit, "client", 1)).toList();
		int callers = CALLERS_PER_INSTANCE * instances.size();
		ExecutorService pool = Executors.newFixedThreadPool(callers);
		AtomicInteger admitted = new AtomicInteger();
		CountDownLatch start = new CountDownLatch(1);
		try {
			List<Future<?>> running = new ArrayList<>();
			for (int caller = 0; caller < callers; caller++) {
				RateLimitStore instance = instances.get(caller % instances.size());
				running.add(pool.submit(() -> {
					start.await();
					for (int attempt = 0; attempt < ATTEMPTS_PER_CALLER; attempt++) {
						RateLimitResult result = instance.tryAcquire(request);
						assertThat(result.store()).isEqualTo("jdbc");
						if (result.allowed()) {
							admitted.incrementAndGet();
						}
					}
					return null;
				}));
			}
			long began = System.nanoTime();
			start.countDown();
			for (Future<?> caller : running) {
				caller.get(120, TimeUnit.SECONDS);
			}
			System.out.printf("%d callers on 2 instances, %d limits per request: %d attempts, %d admitted in %d ms%n",
					callers, limits.size(), callers * ATTEMPTS_PER_CALLER, admitted.get(),
					TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - began));
			return admitted.get();
		}
		finally {
			pool.shutdownNow();
		}
	}

	private static long remaining(RateLimit limit) {
		return instances.get(0).inspect(limit, "client").remaining();
	}

}
