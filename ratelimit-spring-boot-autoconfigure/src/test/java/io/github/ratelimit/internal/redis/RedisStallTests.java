package io.github.ratelimit.internal.redis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import org.junit.jupiter.api.Test;

import org.springframework.dao.QueryTimeoutException;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.internal.core.CircuitBreaker;
import io.github.ratelimit.internal.core.FailoverRateLimitStore;
import io.github.ratelimit.internal.core.ShareRequest;
import io.github.ratelimit.internal.core.ThrottledLog;
import io.github.ratelimit.internal.memory.InMemoryRateLimitStore;
import io.github.ratelimit.store.Acquisition;
import io.github.ratelimit.store.RateLimit;
import io.github.ratelimit.store.RateLimitResult;
import io.github.ratelimit.internal.core.FailoverSettings;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;

/**
 * Redis stalled by {@code DEBUG SLEEP} (as a slow command, a fork or a failover would stall
 * it) or {@code CLIENT PAUSE}, or killed, under a failover store whose calls time out after
 * 250ms: the local fallback decides the calls made meanwhile, synchronous and asynchronous,
 * and when Redis wakes and runs the scripts queued meanwhile (a local-first share's lease
 * among them), they change nothing. No concurrency lease is left behind to lock anyone
 * out, no token is taken a second time: the next calls are decided as if the stall had not
 * happened. Releases of permits held on Redis when it stalled or died neither fail their
 * caller nor leave the permits held.
 */
class RedisStallTests {

	private static final Duration TIMEOUT = Duration.ofMillis(250);

	/** One limit of every rate algorithm, ten an hour: nothing refills while a test runs. */
	private static final List<RateLimit> RATES = List.of(rate(Algorithm.TOKEN_BUCKET), rate(Algorithm.LEAKY_BUCKET),
			rate(Algorithm.FIXED_WINDOW), rate(Algorithm.SLIDING_WINDOW_LOG),
			rate(Algorithm.SLIDING_WINDOW_COUNTER));

	/** Two calls in flight, each lease lasting a minute. */
	private static final RateLimit CALLS = RateLimit.of("calls", Algorithm.CONCURRENCY, 2, Duration.ofMinutes(1));

	/** Four calls in flight, each lease lasting a minute: two on a fallback keeping half. */
	private static final RateLimit WIDE_CALLS = RateLimit.of("wide-calls", Algorithm.CONCURRENCY, 4,
			Duration.ofMinutes(1));

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
		RedisRateLimitStore redis = preloaded(factory, "stall:");
		// the breaker stays closed: every call of the stall goes to Redis and times out there
		FailoverRateLimitStore store = failover(redis, 1.0, new CircuitBreaker(1_000, TimeUnit.SECONDS.toNanos(30)));
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
			Future<?> lease = threads.submit(() -> redis.grant(List.of(new ShareRequest(RATES.get(0), "carol", 1, 4))));
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
	 * {@code CLIENT PAUSE} holds every command until it ends and then runs them: Redis runs
	 * late the calls whose callers gave up, and on time the releases, which carry no
	 * deadline. Alice holds two of four calls on Redis when it pauses; meanwhile the
	 * fallback admits her its own share, two calls, not fewer for the two Redis holds, and
	 * she releases her two Redis calls. Afterwards she has nothing running, and may have
	 * four calls in flight again; each rate holds the token Redis granted before the pause.
	 */
	@Test
	void callsQueuedByAClientPauseWhilePermitsAreHeldChangeNothing() throws Exception {
		try (RedisTestServer server = RedisTestServer.start()) {
			RedisRateLimitStore redis = preloaded(server.connectionFactory(), "pause:");
			FailoverRateLimitStore store = failover(redis, 0.5, new CircuitBreaker(1_000, TimeUnit.SECONDS.toNanos(30)));
			List<RateLimitResult> held = takeBeforeTheFailure(store, redis);

			assertThat(RedisTestSupport.command(RedisTestSupport.LOOPBACK, server.port(), Duration.ofSeconds(2),
					"CLIENT", "PAUSE", "3000", "ALL"))
				.isEqualTo("OK");
			long pausedAt = System.nanoTime();
			assertThat(RedisTestSupport.pong(RedisTestSupport.LOOPBACK, server.port(), Duration.ofMillis(100)))
				.as("Redis paused")
				.isFalse();
			ExecutorService threads = Executors.newFixedThreadPool(RATES.size() + 3);
			try {
				// three calls and a token of each rate at once, each call waiting for Redis on a
				// thread of its own until it gives up
				List<Future<RateLimitResult>> calls = new ArrayList<>();
				List<Future<RateLimitResult>> rates = new ArrayList<>();
				for (int i = 0; i < 3; i++) {
					calls.add(threads.submit(() -> store.tryAcquire(List.of(aliceCall()))));
				}
				for (RateLimit rate : RATES) {
					rates.add(threads.submit(() -> store.tryAcquire(List.of(new Acquisition(rate, "alice", 1)))));
				}
				List<RateLimitResult> admitted = new ArrayList<>();
				int refused = 0;
				for (Future<RateLimitResult> call : calls) {
					RateLimitResult result = call.get(10, TimeUnit.SECONDS);
					assertThat(result.store()).isEqualTo(RateLimitResult.FALLBACK);
					if (result.allowed()) {
						admitted.add(result);
					}
					else {
						refused++;
					}
				}
				assertThat(admitted).as("the fallback's share of four calls").hasSize(2);
				assertThat(refused).isOne();
				for (Future<RateLimitResult> rate : rates) {
					RateLimitResult result = rate.get(10, TimeUnit.SECONDS);
					assertThat(result.store()).isEqualTo(RateLimitResult.FALLBACK);
					assertThat(result.allowed()).isTrue();
				}
				// alice's two Redis calls end during the pause: their releases wait in Redis's
				// queue behind the calls it has not run yet
				List<Future<?>> releases = new ArrayList<>();
				for (RateLimitResult call : held) {
					releases.add(threads.submit(() -> store.refund(List.of(aliceCall()), call)));
				}
				for (Future<?> release : releases) {
					release.get(10, TimeUnit.SECONDS);
				}
				assertThat(RedisTestSupport.pong(RedisTestSupport.LOOPBACK, server.port(), Duration.ofMillis(20)))
					.as("Redis still paused once every call was decided and released")
					.isFalse();
				// and the calls the fallback admitted end too
				for (RateLimitResult call : admitted) {
					store.refund(List.of(aliceCall()), call);
				}
			}
			finally {
				threads.shutdownNow();
			}
			await().atMost(Duration.ofSeconds(6))
				.pollInterval(Duration.ofMillis(50))
				.until(() -> RedisTestSupport.pong(RedisTestSupport.LOOPBACK, server.port(), Duration.ofMillis(200)));
			assertThat(Duration.ofNanos(System.nanoTime() - pausedAt)).isGreaterThanOrEqualTo(Duration.ofMillis(2_900));

			// after, on the connection that queued the late calls and the releases
			assertAdmittedUpToTheLimit(store);
			for (RateLimit rate : RATES) {
				assertThat(redis.inspect(rate, "alice").remaining()).as(rate.name()).isEqualTo(9);
			}
		}
	}

	/**
	 * Redis killed (SIGKILL) while alice holds two of four calls on it, and started again
	 * empty: the fallback decides during the outage at its share, the breaker lets a probe
	 * through once the open time has passed, and Redis decides again. The releases of the
	 * two calls taken before the kill, one during the outage and one after it, neither fail
	 * nor throw, and alice is not locked out.
	 */
	@Test
	void permitsHeldWhenRedisIsKilledLockNobodyOutWhenItComesBackEmpty() throws Exception {
		try (RedisTestServer server = RedisTestServer.start()) {
			RedisRateLimitStore redis = preloaded(server.connectionFactory(), "kill:");
			AtomicLong ticker = new AtomicLong();
			long openNanos = TimeUnit.SECONDS.toNanos(5);
			CircuitBreaker breaker = new CircuitBreaker(2, openNanos, ticker::get);
			FailoverRateLimitStore store = failover(redis, 0.5, breaker);
			List<RateLimitResult> held = takeBeforeTheFailure(store, redis);

			server.kill();
			// the first two calls fail on Redis and open the breaker, the third does not try it:
			// the fallback admits two calls, its share, and five of ten tokens
			List<RateLimitResult> calls = new ArrayList<>();
			for (int i = 0; i < 3; i++) {
				calls.add(store.tryAcquire(List.of(aliceCall())));
			}
			assertThat(breaker.state()).isEqualTo(CircuitBreaker.State.OPEN);
			assertThat(calls).allSatisfy((call) -> assertThat(call.store()).isEqualTo(RateLimitResult.FALLBACK));
			assertThat(calls).extracting(RateLimitResult::allowed).containsExactly(true, true, false);
			RateLimit tokens = RATES.get(0);
			List<Boolean> taken = new ArrayList<>();
			for (int i = 0; i < 6; i++) {
				RateLimitResult result = store.tryAcquire(List.of(new Acquisition(tokens, "alice", 1)));
				assertThat(result.store()).isEqualTo(RateLimitResult.FALLBACK);
				taken.add(result.allowed());
			}
			assertThat(taken).containsExactly(true, true, true, true, true, false);
			// one Redis call ends during the outage: its release fails quietly
			assertThatCode(() -> store.refund(List.of(aliceCall()), held.get(0))).doesNotThrowAnyException();

			server.restart();
			long restartedAt = System.nanoTime();
			// once the open time has passed, a probe goes to Redis, which answers once Lettuce
			// has reconnected
			RateLimit probes = RateLimit.of("probe", Algorithm.TOKEN_BUCKET, 1_000, Duration.ofHours(1));
			await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(50)).until(() -> {
				ticker.addAndGet(openNanos);
				return store.tryAcquire(List.of(new Acquisition(probes, "probe", 1))).store()
					.equals(RateLimitResult.REDIS);
			});
			assertThat(breaker.state()).isEqualTo(CircuitBreaker.State.CLOSED);
			// nothing sent during the outage ran on the new server
			assertThat(redis.inspect(WIDE_CALLS, "alice").exists()).isFalse();
			assertThat(redis.inspect(tokens, "alice").exists()).isFalse();

			// the other Redis call ends after the recovery, and the fallback's two
			assertThatCode(() -> store.refund(List.of(aliceCall()), held.get(1))).doesNotThrowAnyException();
			store.refund(List.of(aliceCall()), calls.get(0));
			store.refund(List.of(aliceCall()), calls.get(1));
			assertAdmittedUpToTheLimit(store);
			// the new server starts empty: a full bucket, less the token taken now
			assertThat(store.tryAcquire(List.of(new Acquisition(tokens, "alice", 1))).store())
				.isEqualTo(RateLimitResult.REDIS);
			assertThat(redis.inspect(tokens, "alice").remaining()).isEqualTo(9);
			// Lettuce's reconnects refused during the outage time out their handshakes a command
			// timeout later, and log errors into the next test if the client has shut down by then
			RedisProcess.sleep(Duration.ofNanos(Math.max(0,
					restartedAt + RedisTestServer.COMMAND_TIMEOUT.plusMillis(500).toNanos() - System.nanoTime())));
		}
	}

	/**
	 * Alice takes two of her four calls and a token of each rate on Redis, and returns the
	 * decisions of her two calls, to release them with later.
	 */
	private static List<RateLimitResult> takeBeforeTheFailure(FailoverRateLimitStore store, RedisRateLimitStore redis) {
		List<RateLimitResult> held = new ArrayList<>();
		for (int i = 0; i < 2; i++) {
			RateLimitResult result = store.tryAcquire(List.of(aliceCall()));
			assertThat(result.store()).isEqualTo(RateLimitResult.REDIS);
			assertThat(result.allowed()).isTrue();
			held.add(result);
		}
		assertThat(redis.inspect(WIDE_CALLS, "alice").remaining()).isEqualTo(2);
		for (RateLimit rate : RATES) {
			assertThat(store.tryAcquire(List.of(new Acquisition(rate, "alice", 1))).store())
				.isEqualTo(RateLimitResult.REDIS);
			assertThat(redis.inspect(rate, "alice").remaining()).as(rate.name()).isEqualTo(9);
		}
		return held;
	}

	/** Alice, with nothing running, is admitted four calls by Redis, and refused a fifth. */
	private static void assertAdmittedUpToTheLimit(FailoverRateLimitStore store) {
		List<RateLimitResult> calls = new ArrayList<>();
		for (int i = 0; i < 5; i++) {
			calls.add(store.tryAcquire(List.of(aliceCall())));
		}
		assertThat(calls).allSatisfy((call) -> assertThat(call.store()).isEqualTo(RateLimitResult.REDIS));
		assertThat(calls).extracting(RateLimitResult::allowed).containsExactly(true, true, true, true, false);
	}

	private static RedisRateLimitStore preloaded(LettuceConnectionFactory factory, String prefix) {
		RedisRateLimitStore redis = RedisRateLimitStore.builder(factory).keyPrefix(prefix).timeout(TIMEOUT).build();
		// a cold connection and the scripts' first load may take longer than a call may
		await().atMost(Duration.ofSeconds(20)).ignoreExceptions().until(() -> {
			redis.preload();
			return true;
		});
		return redis;
	}

	private static FailoverRateLimitStore failover(RedisRateLimitStore redis, double share, CircuitBreaker breaker) {
		ThrottledLog log = new ThrottledLog(TimeUnit.SECONDS.toNanos(1), System::nanoTime);
		return new FailoverRateLimitStore(redis, new InMemoryRateLimitStore(), new FailoverSettings(share, breaker, log, log, (message) -> {
		}, (message) -> {
		}));
	}

	private static Acquisition aliceCall() {
		return new Acquisition(WIDE_CALLS, "alice", 1);
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
