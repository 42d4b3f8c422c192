package io.github.ratelimit.internal.redis;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneId;
import java.util.List;
import java.util.concurrent.RejectedExecutionException;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.RedisCallback;
import org.springframework.data.redis.core.StringRedisTemplate;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.CalendarPeriod;
import io.github.ratelimit.store.Acquisition;
import io.github.ratelimit.store.RateLimit;
import io.github.ratelimit.store.RateLimitResult;
import io.github.ratelimit.store.RateLimitStore;
import io.github.ratelimit.store.contract.MutableClock;
import io.github.ratelimit.store.contract.RateLimitStoreContractTests;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The store contract against a real Redis server, with the time passed explicitly, plus
 * what only the Redis store does: Redis time, TTLs, readable keys and a lost script cache.
 * The server is this class's own, so that the failover test can kill and restart it.
 */
class RedisRateLimitStoreTest extends RateLimitStoreContractTests {

	private static RedisTestServer server;

	private static LettuceConnectionFactory connectionFactory;

	private static StringRedisTemplate redis;

	@BeforeAll
	static void connect() {
		server = RedisTestServer.start();
		connectionFactory = server.connectionFactory();
		redis = new StringRedisTemplate(connectionFactory);
		// the contract's buckets expire in Redis within a second of real time while its clock
		// stands still: connect, load the script and the classes before the first test
		RateLimit limit = RateLimit.of("warm-up", Algorithm.TOKEN_BUCKET, 1, Duration.ofSeconds(1));
		RedisRateLimitStore store = RedisRateLimitStore.builder(connectionFactory)
			.keyPrefix("warm-up:")
			.clock(new MutableClock())
			.build();
		assertThat(store.tryAcquire(List.of(new Acquisition(limit, "warm-up", 1))).allowed()).isTrue();
	}

	@AfterAll
	static void disconnect() {
		server.close();
	}

	@Override
	protected RateLimitStore createStore(MutableClock clock) {
		server.flushAll();
		return RedisRateLimitStore.builder(connectionFactory).keyPrefix("test:").clock(clock).build();
	}

	/** Kills the server: the store's connection drops and new ones are refused. */
	@Override
	protected void failStore() {
		server.kill();
	}

	/** Starts the server again, empty and without the scripts, on the same port. */
	@Override
	protected void recoverStore() {
		server.restart();
	}

	@Test
	void failsAsynchronousCallsOnceClosedWhileSynchronousOnesGoOn() {
		RedisRateLimitStore store = RedisRateLimitStore.builder(connectionFactory)
			.keyPrefix("test:")
			.timeout(Duration.ofSeconds(2))
			.build();
		RateLimit limit = RateLimit.of("closed", Algorithm.TOKEN_BUCKET, 10, Duration.ofHours(1));
		List<Acquisition> one = List.of(new Acquisition(limit, "user:a", 1));
		assertThat(store.tryAcquireAsync(one, 0).toCompletableFuture().join().allowed()).isTrue();
		assertThat(store.tryAcquireAsync(one, 0).toCompletableFuture().join().allowed()).isTrue();
		store.close();
		assertThat(store.tryAcquireAsync(one, 0).toCompletableFuture()).failsWithin(Duration.ofSeconds(5))
			.withThrowableThat()
			.havingRootCause()
			.isInstanceOf(RejectedExecutionException.class);
		// the failed call sent nothing: two taken before, one now
		assertThat(store.tryAcquire(one).decisions().get(0).remaining()).isEqualTo(7);
		store.close();
	}

	@Test
	void decidesOnRedisTimeWhenNoClockIsGiven() {
		RedisRateLimitStore store = RedisRateLimitStore.builder(connectionFactory).keyPrefix("test:").build();
		RateLimit limit = RateLimit.of("redis-time", Algorithm.TOKEN_BUCKET, 2, Duration.ofHours(1));
		long before = System.currentTimeMillis() * 1000;
		RateLimitResult result = store.tryAcquire(List.of(new Acquisition(limit, "user:a", 1)));
		long after = System.currentTimeMillis() * 1000;
		assertThat(result.allowed()).isTrue();
		// same machine: Redis TIME lies between the two readings, give or take a millisecond
		assertThat(result.timestampMicros()).isBetween(before - 1_000, after + 1_000);
	}

	@Test
	void decidesACalendarQuotaOnRedisTimeWithinTheApplicationsWindow() {
		RedisRateLimitStore store = RedisRateLimitStore.builder(connectionFactory).keyPrefix("test:").build();
		ZoneId zone = ZoneId.of("Pacific/Auckland");
		RateLimit limit = RateLimit.calendar("redis-time-daily", 2, CalendarPeriod.DAY, zone);
		RateLimitResult result = store.tryAcquire(List.of(new Acquisition(limit, "user:a", 1)));
		assertThat(result.allowed()).isTrue();
		// the window of Redis's time ends at the next midnight in Auckland, as Java's zone rules say
		Instant decided = Instant.ofEpochSecond(0, result.timestampMicros() * 1_000);
		LocalDate today = LocalDate.ofInstant(decided, zone);
		long start = today.atStartOfDay(zone).toEpochSecond() * 1_000_000;
		long end = today.plusDays(1).atStartOfDay(zone).toEpochSecond() * 1_000_000;
		assertThat(result.decisions().get(0).resetMicros()).isEqualTo(end - result.timestampMicros());
		assertThat(result.decisions().get(0).windowMicros()).isEqualTo(end - start);
		String value = redis.opsForValue().get(store.key(new Acquisition(limit, "user:a", 1)));
		assertThat(value).isEqualTo(start + " 1");
	}

	@Test
	void decidesAnEmptyRequestOnRedisTimeAsAllowed() {
		RedisRateLimitStore store = RedisRateLimitStore.builder(connectionFactory).keyPrefix("test:").build();
		RateLimitResult result = store.tryAcquire(List.of());
		assertThat(result.allowed()).isTrue();
		assertThat(result.decisions()).isEmpty();
		store.refund(List.of(), result);
	}

	@Test
	void everyAlgorithmWritesReadableKeysThatExpire() {
		for (Algorithm algorithm : Algorithm.values()) {
			RateLimit limit = RateLimit.of("GET /orders/{id} " + algorithm, algorithm, 5, Duration.ofMinutes(1));
			Acquisition acquisition = new Acquisition(limit, "user:alice", 1);
			assertThat(store().tryAcquire(List.of(acquisition)).allowed()).isTrue();
			String key = ((RedisRateLimitStore) store()).key(acquisition);
			assertThat(key).isEqualTo("test:{user:alice}:" + limit.id());
			assertThat(redis.getExpire(key)).as("TTL of %s", key).isPositive();
			if (algorithm == Algorithm.SLIDING_WINDOW_LOG) {
				assertThat(redis.getExpire(key + ":sum")).isPositive();
			}
		}
		assertThat(redis.keys("test:*")).allSatisfy((key) -> assertThat(redis.getExpire(key)).isPositive());
	}

	@Test
	void tokenBucketNeedsOneSmallValuePerIdentity() {
		RateLimit limit = RateLimit.of("tb", Algorithm.TOKEN_BUCKET, 5, Duration.ofMinutes(1));
		Acquisition acquisition = new Acquisition(limit, "ip:203.0.113.9", 1);
		store().tryAcquire(List.of(acquisition));
		String key = ((RedisRateLimitStore) store()).key(acquisition);
		assertThat(redis.keys("test:*")).containsExactly(key);
		// the time the bucket is full again and the emission interval it was computed with, in
		// 12 bytes
		assertThat(RedisValues.value(redis, key)).matches("\\d{16}:12000000");
		assertThat(redis.execute((RedisCallback<Long>) (connection) -> connection.stringCommands()
			.strLen(key.getBytes(StandardCharsets.UTF_8)))).isEqualTo(12);
	}

	@Test
	void reloadsScriptsAfterTheServerLostThem() {
		RateLimit limit = RateLimit.of("flush", Algorithm.FIXED_WINDOW, 3, Duration.ofMinutes(1));
		Acquisition acquisition = new Acquisition(limit, "user:a", 1);
		assertThat(store().tryAcquire(List.of(acquisition)).decisions().get(0).remaining()).isEqualTo(2);
		redis.execute((org.springframework.data.redis.core.RedisCallback<Object>) (connection) -> {
			connection.scriptingCommands().scriptFlush();
			return null;
		});
		assertThat(store().tryAcquire(List.of(acquisition)).decisions().get(0).remaining()).isEqualTo(1);
	}

	@Test
	void slidingWindowLogLeavesNoKeyWithoutTtlWhenItsSumWasLost() {
		// the log's TTL is real time: a long period keeps it alive while the test clock moves
		RateLimit limit = RateLimit.of("evicted", Algorithm.SLIDING_WINDOW_LOG, 2, Duration.ofMinutes(1));
		Acquisition acquisition = new Acquisition(limit, "user:alice", 1);
		String key = ((RedisRateLimitStore) store()).key(acquisition);
		assertThat(store().tryAcquire(List.of(acquisition)).allowed()).isTrue();
		clock().advance(Duration.ofSeconds(10));
		assertThat(store().tryAcquire(List.of(acquisition)).allowed()).isTrue();
		// memory pressure evicts the sum but not its log (maxmemory-policy volatile-*, allkeys-*)
		redis.delete(key + ":sum");
		clock().advance(Duration.ofSeconds(55));
		// the first entry left the window, the second has not: one unit is free, two are asked for
		RateLimitResult rejected = store().tryAcquire(List.of(new Acquisition(limit, "user:alice", 2)));
		assertThat(rejected.allowed()).isFalse();
		assertThat(rejected.decisions().get(0).remaining()).isEqualTo(1);
		assertThat(redis.keys("test:*")).allSatisfy((each) -> assertThat(redis.getExpire(each)).as(each).isPositive());
		RateLimitResult admitted = store().tryAcquire(List.of(acquisition));
		assertThat(admitted.allowed()).isTrue();
		assertThat(admitted.decisions().get(0).remaining()).isZero();
		assertThat(redis.opsForValue().get(key + ":sum")).isEqualTo("2");
		assertThat(redis.keys("test:*")).allSatisfy((each) -> assertThat(redis.getExpire(each)).as(each).isPositive());
	}

	@Test
	void slidingWindowLogRefundAfterTheSumWasLostLeavesNoKeyWithoutTtl() {
		RateLimit limit = RateLimit.of("evicted-refund", Algorithm.SLIDING_WINDOW_LOG, 2, Duration.ofMinutes(1));
		Acquisition acquisition = new Acquisition(limit, "user:bob", 1);
		String key = ((RedisRateLimitStore) store()).key(acquisition);
		RateLimitResult admitted = store().tryAcquire(List.of(acquisition));
		assertThat(admitted.allowed()).isTrue();
		redis.delete(key + ":sum");
		store().refund(List.of(acquisition), admitted);
		assertThat(redis.keys("test:*")).allSatisfy((each) -> assertThat(redis.getExpire(each)).as(each).isPositive());
		// the refund was given back: the whole capacity is there again
		assertThat(store().tryAcquire(List.of(new Acquisition(limit, "user:bob", 2))).allowed()).isTrue();
	}

	@Test
	void identitiesCannotOpenAHashTagOfTheirOwn() {
		RateLimit limit = RateLimit.of("tag", Algorithm.TOKEN_BUCKET, 5, Duration.ofMinutes(1));
		String key = ((RedisRateLimitStore) store()).key(new Acquisition(limit, "x}{evil", 1));
		assertThat(key).isEqualTo("test:{x%7D%7Bevil}:" + limit.id());
	}

	@Test
	void resetAllDeletesOnlyTheKeysUnderItsPrefix() {
		RateLimit limit = RateLimit.of("prefixed", Algorithm.TOKEN_BUCKET, 1, Duration.ofMinutes(1));
		RedisRateLimitStore globby = RedisRateLimitStore.builder(connectionFactory)
			.keyPrefix("te[s]t*:")
			.clock(clock())
			.build();
		Acquisition acquisition = new Acquisition(limit, "user:carol", 1);
		assertThat(store().tryAcquire(List.of(acquisition)).allowed()).isTrue();
		assertThat(globby.tryAcquire(List.of(acquisition)).allowed()).isTrue();
		redis.opsForValue().set("test-other", "kept");
		globby.resetAll();
		assertThat(redis.keys("te\\[s]t\\*:*")).as("the glob characters of the prefix match literally").isEmpty();
		assertThat(redis.keys("test:*")).hasSize(1);
		store().resetAll();
		assertThat(redis.keys("test:*")).isEmpty();
		assertThat(redis.opsForValue().get("test-other")).isEqualTo("kept");
	}

}
