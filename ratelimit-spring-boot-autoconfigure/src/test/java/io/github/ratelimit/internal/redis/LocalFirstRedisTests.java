package io.github.ratelimit.internal.redis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.internal.core.CircuitBreaker;
import io.github.ratelimit.internal.core.FailoverRateLimitStore;
import io.github.ratelimit.internal.core.FailoverSettings;
import io.github.ratelimit.internal.core.RateLimitClock;
import io.github.ratelimit.internal.core.ThrottledLog;
import io.github.ratelimit.internal.local.LocalFirstRateLimitStore;
import io.github.ratelimit.internal.local.LocalFirstSettings;
import io.github.ratelimit.internal.memory.InMemoryRateLimitStore;
import io.github.ratelimit.store.Acquisition;
import io.github.ratelimit.store.RateLimit;
import io.github.ratelimit.store.RateLimitResult;
import io.github.ratelimit.store.RateLimitStore;
import io.github.ratelimit.store.contract.MutableClock;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The local-first store over a real Redis server, syncing on its own thread while requests
 * are decided.
 */
class LocalFirstRedisTests {

	private static LettuceConnectionFactory connectionFactory;

	@BeforeAll
	static void connect() {
		connectionFactory = RedisTestServer.shared().connectionFactory();
	}

	@AfterAll
	static void disconnect() {
		connectionFactory.destroy();
	}

	@Test
	void aRefundedStageAndARefilledBucketAdmitWhileSyncsRun() throws Exception {
		MutableClock clock = new MutableClock();
		RedisRateLimitStore redis = RedisRateLimitStore.builder(connectionFactory)
			.keyPrefix("local-first-" + System.nanoTime() + ":")
			.clock(clock)
			.timeout(Duration.ofSeconds(5))
			.build();
		for (int round = 0; round < 30; round++) {
			LocalFirstRateLimitStore store = new LocalFirstRateLimitStore(redis, redis, new LocalFirstSettings(clock, Duration.ofMillis(1),
					(limit) -> false, 1_000, new ThrottledLog(0, System::nanoTime), (message) -> {
						throw new AssertionError(message);
					}));
			store.start();
			try {
				RateLimit route = RateLimit.of("route-" + round, Algorithm.TOKEN_BUCKET, 5, Duration.ofHours(1000));
				RateLimit handler = RateLimit.of("handler-" + round, Algorithm.TOKEN_BUCKET, 1, Duration.ofHours(1));
				for (int i = 1; i <= 4; i++) {
					RateLimitResult routed = acquire(store, route, "ip");
					assertThat(routed.allowed()).as("route %d", i).isTrue();
					RateLimitResult handled = acquire(store, handler, "global");
					assertThat(handled.allowed()).as("handler %d", i).isEqualTo(i == 1);
					if (!handled.allowed()) {
						store.refund(List.of(new Acquisition(route, "ip", 1)), routed);
					}
					Thread.sleep(round % 3);
				}
				clock.advance(Duration.ofHours(2));
				Thread.sleep(round % 4);
				RateLimitResult routed = acquire(store, route, "ip");
				RateLimitResult handled = acquire(store, handler, "global");
				assertThat(routed.allowed()).as("route after, round %d: %s", round, routed).isTrue();
				assertThat(handled.allowed()).as("handler after, round %d: %s", round, handled).isTrue();
			}
			finally {
				store.close();
			}
		}
	}

	@Test
	void whenRedisDiesSharesKeepDecidingAndTheFallbackDecidesTheRestWithoutAnError() {
		try (RedisTestServer server = RedisTestServer.start()) {
			LettuceConnectionFactory factory = server.connectionFactory();
			RedisRateLimitStore redis = RedisRateLimitStore.builder(factory)
				.keyPrefix("down:")
				.timeout(Duration.ofMillis(200))
				.build();
			LocalFirstRateLimitStore localFirst = new LocalFirstRateLimitStore(redis, redis, new LocalFirstSettings(RateLimitClock.system(), Duration.ofMillis(10), (limit) -> false, 1_000,
					new ThrottledLog(0, System::nanoTime), (message) -> {
					}));
			FailoverRateLimitStore store = new FailoverRateLimitStore(localFirst,
					new InMemoryRateLimitStore(RateLimitClock.system(), 1_000), new FailoverSettings(0.5,
					new CircuitBreaker(3, Duration.ofMinutes(1).toNanos()), new ThrottledLog(0, System::nanoTime),
					new ThrottledLog(0, System::nanoTime), (message) -> {
					}, (message) -> {
					}));
			RateLimit limit = RateLimit.of("down", Algorithm.TOKEN_BUCKET, 100, Duration.ofHours(1));
			for (int i = 0; i < 20; i++) {
				assertThat(acquire(store, limit, "held").allowed()).isTrue();
			}
			// the sync tops the share up to two intervals of that demand
			localFirst.sync().join();
			server.kill();
			for (int i = 0; i < 20; i++) {
				RateLimitResult fromShare = acquire(store, limit, "held");
				assertThat(fromShare.allowed()).isTrue();
				// decided in memory from the share, and reported so
				assertThat(fromShare.store()).isEqualTo(RateLimitResult.LOCAL);
			}
			// a bucket without a share needs Redis: the fallback decides it at half the limit
			int admitted = 0;
			for (int i = 0; i < 60; i++) {
				RateLimitResult fallback = acquire(store, limit, "fresh");
				assertThat(fallback.store()).isEqualTo(RateLimitResult.FALLBACK);
				admitted += fallback.allowed() ? 1 : 0;
			}
			assertThat(admitted).isEqualTo(50);
			localFirst.close();
			factory.destroy();
		}
	}

	@Test
	void instancesOverLimitNeverAdmitMoreThanTheBucketHadAndUseMostOfIt() throws Exception {
		RateLimit limit = RateLimit.of("fleet-login", Algorithm.TOKEN_BUCKET, 200, Duration.ofSeconds(1));
		onFleetOfFour((server, fleet) -> {
			long start = System.currentTimeMillis();
			long admitted = fleet.hammer(limit, Duration.ofMillis(1_500));
			long elapsedMillis = System.currentTimeMillis() - start;
			// Redis decides on its TIME, the clock of this machine: no more than the bucket's
			// 200 and its refill of 200 a second over the run
			long allowance = 200 + 200 * elapsedMillis / 1_000 + 1;
			assertThat(admitted).isLessThanOrEqualTo(allowance);
			assertThat(admitted).isGreaterThanOrEqualTo(allowance * 6 / 10);
		});
	}

	@Test
	void instancesBelowTheLimitCallRedisPerSyncNotPerRequest() throws Exception {
		// a billion tokens: out of reach of any machine in a second (a bucket refills at most a
		// token a microsecond)
		RateLimit limit = RateLimit.of("fleet-api", Algorithm.TOKEN_BUCKET, 1_000_000_000, Duration.ofSeconds(1_000));
		onFleetOfFour((server, fleet) -> {
			long before = RedisTestSupport.scriptCalls(server);
			long start = System.currentTimeMillis();
			long admitted = fleet.hammer(limit, Duration.ofMillis(1_000));
			long elapsedMillis = System.currentTimeMillis() - start;
			long calls = RedisTestSupport.scriptCalls(server) - before;
			assertThat(admitted).isEqualTo(fleet.attempts.get());
			// one settlement per instance and interval, and a few while the shares grow
			assertThat(calls).isLessThanOrEqualTo(4 * (elapsedMillis / 10 + 1) * 2 + 100);
			assertThat(calls * 10).isLessThan(admitted);
		});
	}

	/** Runs a test against four instances syncing every 10 ms on a Redis server of its own. */
	private static void onFleetOfFour(FleetTest test) throws Exception {
		try (RedisTestServer server = RedisTestServer.start()) {
			Fleet fleet = new Fleet(server, 4, Duration.ofMillis(10));
			try {
				test.run(server, fleet);
			}
			finally {
				fleet.close();
			}
		}
	}

	private interface FleetTest {

		void run(RedisTestServer server, Fleet fleet) throws Exception;

	}


	/** Application instances: each its own connection, Redis store and local-first store. */
	private static final class Fleet {

		private final List<LettuceConnectionFactory> factories = new ArrayList<>();

		private final List<LocalFirstRateLimitStore> instances = new ArrayList<>();

		final AtomicLong attempts = new AtomicLong();

		Fleet(RedisTestServer server, int size, Duration syncInterval) {
			for (int i = 0; i < size; i++) {
				LettuceConnectionFactory factory = server.connectionFactory();
				RedisRateLimitStore redis = RedisRateLimitStore.builder(factory)
					.keyPrefix("fleet:")
					.timeout(Duration.ofSeconds(5))
					.build();
				LocalFirstRateLimitStore store = new LocalFirstRateLimitStore(redis, redis, new LocalFirstSettings(RateLimitClock.system(), syncInterval, (limit) -> false, 1_000,
						new ThrottledLog(0, System::nanoTime), (message) -> {
						}));
				// connected and the script loaded before the clock starts: on a loaded machine that
				// alone can take longer than a run
				RateLimit warmUp = RateLimit.of("fleet-warm-up", Algorithm.TOKEN_BUCKET, 1_000, Duration.ofSeconds(1));
				assertThat(store.tryAcquire(List.of(new Acquisition(warmUp, "instance-" + i, 1))).allowed()).isTrue();
				store.start();
				this.factories.add(factory);
				this.instances.add(store);
			}
		}

		/** One caller per instance, asking as fast as it is answered; returns how many were admitted. */
		long hammer(RateLimit limit, Duration duration) throws Exception {
			AtomicLong admitted = new AtomicLong();
			long end = System.nanoTime() + duration.toNanos();
			List<Thread> callers = new ArrayList<>();
			for (LocalFirstRateLimitStore instance : this.instances) {
				Thread caller = new Thread(() -> {
					List<Acquisition> one = List.of(new Acquisition(limit, "tenant-a", 1));
					while (System.nanoTime() < end) {
						this.attempts.incrementAndGet();
						if (instance.tryAcquire(one).allowed()) {
							admitted.incrementAndGet();
						}
					}
				});
				caller.start();
				callers.add(caller);
			}
			for (Thread caller : callers) {
				caller.join();
			}
			return admitted.get();
		}

		void close() {
			this.instances.forEach(LocalFirstRateLimitStore::close);
			this.factories.forEach(LettuceConnectionFactory::destroy);
		}

	}

	private static RateLimitResult acquire(RateLimitStore store, RateLimit limit,
			String identity) {
		return store.tryAcquire(List.of(new Acquisition(limit, identity, 1)));
	}

}
