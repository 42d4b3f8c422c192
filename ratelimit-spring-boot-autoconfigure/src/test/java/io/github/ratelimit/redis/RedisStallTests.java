package io.github.ratelimit.redis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

import org.springframework.dao.QueryTimeoutException;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.core.Acquisition;
import io.github.ratelimit.core.CircuitBreaker;
import io.github.ratelimit.core.FailoverRateLimitStore;
import io.github.ratelimit.core.Lease;
import io.github.ratelimit.core.RateLimit;
import io.github.ratelimit.core.RateLimitResult;
import io.github.ratelimit.core.ThrottledLog;
import io.github.ratelimit.memory.InMemoryRateLimitStore;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;

/**
 * Redis stalled by {@code DEBUG SLEEP} (as a slow command, a fork or a failover would stall
 * it) under a failover store whose calls time out after 250ms: the local fallback decides
 * the calls made during the stall, synchronous and asynchronous, and when Redis wakes and
 * runs the scripts queued meanwhile (a local-first share's lease among them), they change
 * nothing. No concurrency lease is left behind to lock anyone out, no token is taken a
 * second time: the next calls are decided as if the stall had not happened.
 */
class RedisStallTests {

	private static final Duration TIMEOUT = Duration.ofMillis(250);

	/** One limit of every rate algorithm, ten an hour: nothing refills while a test runs. */
	private static final List<RateLimit> RATES = List.of(rate(Algorithm.TOKEN_BUCKET), rate(Algorithm.LEAKY_BUCKET),
			rate(Algorithm.FIXED_WINDOW), rate(Algorithm.SLIDING_WINDOW_LOG),
			rate(Algorithm.SLIDING_WINDOW_COUNTER));

	/** Two calls in flight, each lease lasting a minute. */
	private static final RateLimit CALLS = RateLimit.of("calls", Algorithm.CONCURRENCY, 2, Duration.ofMinutes(1));

	@Test
	void callsAStalledServerRunsAfterTheirCallersGaveUpChangeNothing() throws Exception {
		try (RedisTestServer redis = RedisTestServer.start()) {
			stallAndCheck(redis.connectionFactory(), List.of(redis.port()), Duration.ofSeconds(3));
		}
	}

	@Test
	void callsAStalledClusterRunsAfterTheirCallersGaveUpChangeNothing() throws Exception {
		RedisTestCluster cluster = RedisTestCluster.shared();
		cluster.flushAll();
		LettuceConnectionFactory factory = cluster.connectionFactory();
		try {
			// shorter than the nodes' timeout: the cluster stays healthy
			stallAndCheck(factory, cluster.masters().stream().map(RedisTestCluster.HostAndPort::port).toList(),
					Duration.ofMillis(1_500));
		}
		finally {
			factory.destroy();
			cluster.flushAll();
		}
	}

	private void stallAndCheck(LettuceConnectionFactory factory, List<Integer> ports, Duration stall)
			throws Exception {
		RedisRateLimitStore redis = new RedisRateLimitStore(factory, "stall:", null, TIMEOUT);
		// a cold connection and the scripts' first load may take longer than a call may
		await().atMost(Duration.ofSeconds(20)).ignoreExceptions().until(() -> {
			redis.preload();
			return true;
		});
		ThrottledLog log = new ThrottledLog(TimeUnit.SECONDS.toNanos(1), System::nanoTime);
		// the breaker stays closed: every call of the stall goes to Redis and times out there
		FailoverRateLimitStore store = new FailoverRateLimitStore(redis, new InMemoryRateLimitStore(), 1.0,
				new CircuitBreaker(1_000, TimeUnit.SECONDS.toNanos(30)), log, log, (message) -> {
				}, (message) -> {
				});
		// before: alice takes one of each rate on Redis
		for (RateLimit rate : RATES) {
			assertThat(store.tryAcquire(List.of(new Acquisition(rate, "alice", 1))).store())
				.isEqualTo(RateLimitResult.REDIS);
			assertThat(redis.inspect(rate, "alice").remaining()).as(rate.name()).isEqualTo(9);
		}

		List<Future<Object>> sleeping = stall(ports, stall);
		ExecutorService threads = Executors.newFixedThreadPool(RATES.size() + 3);
		List<RateLimitResult> decided = new ArrayList<>();
		try {
			// during: alice takes each rate again and two calls' leases, each call on a thread
			// of its own; bob the same through the asynchronous path
			List<Future<RateLimitResult>> sync = new ArrayList<>();
			List<CompletableFuture<RateLimitResult>> async = new ArrayList<>();
			List<Acquisition> leases = List.of(new Acquisition(CALLS, "alice", 1), new Acquisition(CALLS, "alice", 1));
			for (RateLimit rate : RATES) {
				sync.add(threads.submit(() -> store.tryAcquire(List.of(new Acquisition(rate, "alice", 1)))));
				async.add(store.tryAcquireAsync(List.of(new Acquisition(rate, "bob", 1)), 0).toCompletableFuture());
			}
			for (Acquisition lease : leases) {
				sync.add(threads.submit(() -> store.tryAcquire(List.of(lease))));
				async.add(store.tryAcquireAsync(List.of(new Acquisition(CALLS, "bob", 1)), 0).toCompletableFuture());
			}
			// and carol's instance leases a share of the token bucket, as local-first mode does
			Future<?> lease = threads.submit(() -> redis.lease(List.of(new Lease(RATES.get(0), "carol", 1, 4))));
			for (Future<RateLimitResult> result : sync) {
				decided.add(result.get(10, TimeUnit.SECONDS));
			}
			assertThatExceptionOfType(ExecutionException.class).isThrownBy(() -> lease.get(10, TimeUnit.SECONDS))
				.withCauseInstanceOf(QueryTimeoutException.class);
			for (CompletableFuture<RateLimitResult> result : async) {
				decided.add(result.get(10, TimeUnit.SECONDS));
			}
			assertThat(sleeping).as("Redis still asleep once every call was decided").noneMatch(Future::isDone);
			assertThat(decided).allSatisfy((result) -> {
				assertThat(result.store()).isEqualTo(RateLimitResult.FALLBACK);
				assertThat(result.allowed()).isTrue();
			});
			// alice's calls end: their leases go back to the store that granted them
			int first = RATES.size();
			store.refund(List.of(leases.get(0)), decided.get(first));
			store.refund(List.of(leases.get(1)), decided.get(first + 1));
			for (Future<Object> sleeper : sleeping) {
				assertThat(sleeper.get(stall.toMillis() + 5_000, TimeUnit.MILLISECONDS)).isEqualTo("OK");
			}
		}
		finally {
			threads.shutdownNow();
		}

		// after, on the connection that queued the late calls, so Redis has run them: alice is
		// not locked out, and may have two calls in flight, not more
		RateLimitResult call = store.tryAcquire(List.of(new Acquisition(CALLS, "alice", 1)));
		RateLimitResult another = store.tryAcquire(List.of(new Acquisition(CALLS, "alice", 1)));
		assertThat(List.of(call, another)).allSatisfy((result) -> {
			assertThat(result.store()).isEqualTo(RateLimitResult.REDIS);
			assertThat(result.allowed()).isTrue();
		});
		assertThat(store.tryAcquire(List.of(new Acquisition(CALLS, "alice", 1))).allowed()).isFalse();
		// Redis holds what it decided itself, and nothing of the calls it ran too late
		for (RateLimit rate : RATES) {
			assertThat(redis.inspect(rate, "alice").remaining()).as(rate.name()).isEqualTo(9);
			assertThat(redis.inspect(rate, "bob").exists()).as(rate.name()).isFalse();
		}
		assertThat(redis.inspect(CALLS, "bob").exists()).isFalse();
		assertThat(redis.inspect(RATES.get(0), "carol").exists()).isFalse();
	}

	/**
	 * Puts every server to sleep for {@code duration}, and returns once none answers: the
	 * futures complete with each {@code DEBUG SLEEP}'s reply when it wakes.
	 */
	private static List<Future<Object>> stall(List<Integer> ports, Duration duration) {
		ExecutorService sleepers = Executors.newFixedThreadPool(ports.size());
		List<Future<Object>> sleeping = new ArrayList<>();
		String seconds = Double.toString(duration.toMillis() / 1000.0);
		for (int port : ports) {
			sleeping.add(sleepers.submit(() -> RedisTestSupport.command(RedisTestSupport.LOOPBACK, port,
					duration.plusSeconds(5), "DEBUG", "SLEEP", seconds)));
		}
		sleepers.shutdown();
		long deadline = System.nanoTime() + duration.toNanos() / 2;
		for (int port : ports) {
			while (RedisTestSupport.pong(RedisTestSupport.LOOPBACK, port, Duration.ofMillis(20))) {
				if (System.nanoTime() - deadline > 0) {
					throw new IllegalStateException("Redis on port " + port + " did not fall asleep");
				}
			}
		}
		return sleeping;
	}

	private static RateLimit rate(Algorithm algorithm) {
		return RateLimit.of(algorithm.name().toLowerCase(), algorithm, 10, Duration.ofHours(1));
	}

}
