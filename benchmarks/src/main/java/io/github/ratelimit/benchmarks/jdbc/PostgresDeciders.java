package io.github.ratelimit.benchmarks.jdbc;

import java.time.Duration;
import java.util.List;
import java.util.function.Supplier;

import javax.sql.DataSource;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.github.bucket4j.BucketConfiguration;
import io.github.bucket4j.distributed.ExpirationAfterWriteStrategy;
import io.github.bucket4j.distributed.jdbc.PrimaryKeyMapper;
import io.github.bucket4j.distributed.proxy.ProxyManager;
import io.github.bucket4j.postgresql.Bucket4jPostgreSQL;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.benchmarks.loop.ClosedLoop.Decider;
import io.github.ratelimit.internal.jdbc.JdbcStateStorage;
import io.github.ratelimit.store.Acquisition;
import io.github.ratelimit.store.RateLimit;
import io.github.ratelimit.store.RateLimitDecision;
import io.github.ratelimit.store.RateLimitResult;
import io.github.ratelimit.store.RateLimitStore;
import io.github.ratelimit.store.RateLimitStores;

/**
 * The PostgreSQL rate limiters under comparison, each deciding one request of cost 1 for an
 * identity against the same limit, over a HikariCP pool of its own of the same size: a
 * token bucket of {@link #CAPACITY} tokens refilled at {@link #CAPACITY} per second, so that
 * every decision admits and the benchmark measures what a decision costs, not a rejection.
 * The variants with two limits decide a second, equal limit on the same identity too.
 */
final class PostgresDeciders {

	/** Bucket size and tokens refilled per second. */
	static final long CAPACITY = 1_000_000_000L;

	/** Name of the limit. */
	static final String LIMIT_NAME = "bench";

	/** Name of the second limit of the two-limit variants. */
	static final String SECOND_LIMIT_NAME = "bench-second";

	/** Bucket4j's table, as the harness script creates it. */
	static final String BUCKET4J_TABLE = "bucket4j_bucket";

	/**
	 * Longest wait of a caller for one storage call: generous, so that 64 callers queueing
	 * on one hot row measure throughput and latency instead of timeouts.
	 */
	static final Duration STORE_TIMEOUT = Duration.ofSeconds(5);

	private PostgresDeciders() {
	}

	/** The limit every decider enforces, as this library's {@link RateLimit}. */
	static RateLimit limit(String name) {
		return new RateLimit(name, Algorithm.TOKEN_BUCKET, CAPACITY, CAPACITY, Duration.ofSeconds(1));
	}

	/** The same limit in Bucket4j's terms: a greedy refill of the capacity per second. */
	static BucketConfiguration bucket4jLimit(long capacity, long refillTokens, Duration period) {
		return BucketConfiguration.builder()
			.addLimit((limit) -> limit.capacity(capacity).refillGreedy(refillTokens, period))
			.build();
	}

	/**
	 * A HikariCP pool of {@code size} connections, all opened at once so that no run pays
	 * for opening them.
	 */
	static HikariDataSource pool(String jdbcUrl, String user, int size, String name) {
		HikariConfig config = new HikariConfig();
		config.setJdbcUrl(jdbcUrl);
		config.setUsername(user);
		config.setMaximumPoolSize(size);
		config.setMinimumIdle(size);
		config.setPoolName(name);
		return new HikariDataSource(config);
	}

	/**
	 * This library's PostgreSQL storage on the pool, as the auto-configuration builds it
	 * (statement and network timeouts of {@link #STORE_TIMEOUT}), with its table created as
	 * an application's start-up would.
	 */
	static JdbcStateStorage storage(DataSource dataSource) {
		JdbcStateStorage storage = JdbcStateStorage.builder(dataSource).timeout(STORE_TIMEOUT).build();
		storage.createSchema();
		return storage;
	}

	/**
	 * This library's store over the storage as an application gets it: at most
	 * {@code threads} calls at once, each caller deciding on its own thread and waiting at
	 * most {@link #STORE_TIMEOUT}. A close of the store stops its threads.
	 */
	static RateLimitStore blockingStore(JdbcStateStorage storage, int threads) {
		return RateLimitStores.atomic(storage, STORE_TIMEOUT, threads);
	}

	/**
	 * Decides with the store, one limit per request, reading the decision's remaining
	 * quota and reset time as the HTTP filter does for its headers.
	 */
	static Decider ours(RateLimitStore store) {
		RateLimit limit = limit(LIMIT_NAME);
		return (identity) -> {
			RateLimitResult result = store.tryAcquire(List.of(new Acquisition(limit, identity, 1)));
			return headers(result.decisions().get(0));
		};
	}

	/**
	 * Decides two limits of the same identity together, all-or-nothing, in one
	 * transaction that locks both rows.
	 */
	static Decider oursTwoLimits(RateLimitStore store) {
		RateLimit first = limit(LIMIT_NAME);
		RateLimit second = limit(SECOND_LIMIT_NAME);
		return (identity) -> {
			RateLimitResult result = store
				.tryAcquire(List.of(new Acquisition(first, identity, 1), new Acquisition(second, identity, 1)));
			return headers(result.decisions().get(0)) & headers(result.decisions().get(1));
		};
	}

	/** Whether the decision admits, after reading what the rate limit headers show. */
	private static boolean headers(RateLimitDecision decision) {
		return decision.allowed() && decision.remaining() >= 0 && decision.resetMicros() >= 0;
	}

	/**
	 * Bucket4j's PostgreSQL proxy manager that locks the bucket's row with
	 * {@code SELECT ... FOR UPDATE}, keyed by strings, with rows expiring once their bucket
	 * would be full again (as the Redis benchmark's Bucket4j does). A bucket proxy is looked
	 * up per request, as a filter would.
	 */
	static ProxyManager<String> bucket4jProxies(DataSource dataSource) {
		return Bucket4jPostgreSQL.selectForUpdateBasedBuilder(dataSource)
			.primaryKeyMapper(PrimaryKeyMapper.STRING)
			.table(BUCKET4J_TABLE)
			.idColumn("id")
			.stateColumn("state")
			.expiresAtColumn("expires_at")
			.expirationAfterWrite(ExpirationAfterWriteStrategy.basedOnTimeForRefillingBucketUpToMax(Duration.ofSeconds(10)))
			.build();
	}

	/** Bucket4j deciding the limit with {@code tryConsume(1)}. */
	static Decider bucket4j(ProxyManager<String> proxies) {
		Supplier<BucketConfiguration> configuration = constant(bucket4jLimit(CAPACITY, CAPACITY, Duration.ofSeconds(1)));
		return (identity) -> proxies.builder().build(LIMIT_NAME + ":" + identity, configuration).tryConsume(1);
	}

	/**
	 * Bucket4j deciding two limits, each a bucket of its own: two transactions, one after
	 * the other. (Bucket4j has no call that consumes from two buckets atomically; a request
	 * the second bucket rejects would have to give the first its token back. Two bandwidths
	 * in one bucket would be one transaction, but only for limits that share their key.)
	 */
	static Decider bucket4jTwoLimits(ProxyManager<String> proxies) {
		Supplier<BucketConfiguration> configuration = constant(bucket4jLimit(CAPACITY, CAPACITY, Duration.ofSeconds(1)));
		return (identity) -> proxies.builder().build(LIMIT_NAME + ":" + identity, configuration).tryConsume(1)
				& proxies.builder().build(SECOND_LIMIT_NAME + ":" + identity, configuration).tryConsume(1);
	}

	private static Supplier<BucketConfiguration> constant(BucketConfiguration configuration) {
		return () -> configuration;
	}

}
