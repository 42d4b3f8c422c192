package io.github.ratelimit.benchmarks.redis;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Supplier;

import io.github.bucket4j.BucketConfiguration;
import io.github.bucket4j.distributed.ExpirationAfterWriteStrategy;
import io.github.bucket4j.distributed.proxy.ProxyManager;
import io.github.bucket4j.redis.lettuce.Bucket4jLettuce;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.async.RedisAsyncCommands;

import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.benchmarks.loop.ClosedLoop.Decider;
import io.github.ratelimit.internal.redis.RedisRateLimitStore;
import io.github.ratelimit.store.Acquisition;
import io.github.ratelimit.store.RateLimit;
import io.github.ratelimit.store.RateLimitResult;

/**
 * The three Redis rate limiters under comparison, each deciding one request of cost 1 for
 * an identity against the same limit, through the same Lettuce connection: a token bucket
 * of {@link #CAPACITY} tokens refilled at {@link #CAPACITY} per second, so that every
 * decision admits and the benchmark measures what a decision costs, not a rejection.
 */
public final class RedisDeciders {

	/** Bucket size and tokens refilled per second. */
	static final long CAPACITY = 1_000_000_000L;

	/** Key prefix of the store, as {@code ratelimit.redis.key-prefix} sets it. */
	static final String KEY_PREFIX = "ratelimit:";

	/** Name of the limit, which ends every key of the store. */
	static final String LIMIT_NAME = "bench";

	/** The store's default per-call timeout ({@code ratelimit.redis.timeout}). */
	static final Duration STORE_TIMEOUT = Duration.ofMillis(250);

	private static final Duration CALL_TIMEOUT = Duration.ofSeconds(5);

	private RedisDeciders() {
	}

	/** The limit every decider enforces, as this library's {@link RateLimit}. */
	static RateLimit limit() {
		return new RateLimit(LIMIT_NAME, Algorithm.TOKEN_BUCKET, CAPACITY, CAPACITY, Duration.ofSeconds(1));
	}

	/**
	 * This library's store, built as the auto-configuration builds it (a Lettuce factory
	 * and the default timeout), with its script loaded ahead of the first call.
	 * @param connectionFactory the connections to Redis
	 * @return a decider over the store
	 */
	public static Decider ours(LettuceConnectionFactory connectionFactory) {
		RedisRateLimitStore store = RedisRateLimitStore.builder(connectionFactory)
			.keyPrefix(KEY_PREFIX)
			.timeout(STORE_TIMEOUT)
			.build();
		store.preload();
		RateLimit limit = limit();
		return (identity) -> {
			RateLimitResult result = store.tryAcquire(List.of(new Acquisition(limit, identity, 1)));
			return result.allowed();
		};
	}

	/**
	 * Bucket4j's compare-and-swap proxy manager for Lettuce on the factory's shared
	 * connection, with keys expiring once their bucket would be full again, as its
	 * documentation recommends. A bucket proxy is looked up per request, as a filter would.
	 */
	@SuppressWarnings("unchecked")
	static Decider bucket4j(LettuceConnectionFactory connectionFactory) {
		RedisConnection connection = connectionFactory.getConnection();
		RedisAsyncCommands<byte[], byte[]> commands = (RedisAsyncCommands<byte[], byte[]>) connection
			.getNativeConnection();
		ProxyManager<byte[]> proxies = Bucket4jLettuce.casBasedBuilder(commands)
			.expirationAfterWrite(ExpirationAfterWriteStrategy.basedOnTimeForRefillingBucketUpToMax(Duration.ofSeconds(10)))
			.build();
		BucketConfiguration configuration = BucketConfiguration.builder()
			.addLimit((limit) -> limit.capacity(CAPACITY).refillGreedy(CAPACITY, Duration.ofSeconds(1)))
			.build();
		Supplier<BucketConfiguration> configurationSupplier = () -> configuration;
		return (identity) -> proxies.builder()
			.build(("bucket4j:{" + identity + "}").getBytes(StandardCharsets.UTF_8), configurationSupplier)
			.tryConsume(1);
	}

	/**
	 * The two-key token bucket script in Spring Cloud Gateway's shape, by EVALSHA on the
	 * factory's shared connection.
	 */
	@SuppressWarnings("unchecked")
	static Decider gateway(LettuceConnectionFactory connectionFactory) {
		RedisConnection connection = connectionFactory.getConnection();
		RedisAsyncCommands<byte[], byte[]> commands = (RedisAsyncCommands<byte[], byte[]>) connection
			.getNativeConnection();
		String sha = await(commands.scriptLoad(resource("gateway_token_bucket.lua")));
		byte[][] args = { bytes(Long.toString(CAPACITY)), bytes(Long.toString(CAPACITY)), bytes("1") };
		return (identity) -> {
			String prefix = "request_rate_limiter.{" + identity + "}";
			byte[][] keys = { bytes(prefix + ".tokens"), bytes(prefix + ".timestamp") };
			List<Object> reply = await(commands.evalsha(sha, ScriptOutputType.MULTI, keys, args));
			return ((Number) reply.get(0)).longValue() == 1;
		};
	}

	private static <T> T await(java.util.concurrent.Future<T> future) {
		try {
			return future.get(CALL_TIMEOUT.toNanos(), TimeUnit.NANOSECONDS);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException("Interrupted while waiting for Redis", ex);
		}
		catch (ExecutionException | TimeoutException ex) {
			throw new IllegalStateException("Redis call failed: " + ex, ex);
		}
	}

	private static byte[] resource(String name) {
		try (InputStream in = RedisDeciders.class.getResourceAsStream(name)) {
			if (in == null) {
				throw new IllegalStateException("Missing benchmark resource " + name);
			}
			return in.readAllBytes();
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

	private static byte[] bytes(String value) {
		return value.getBytes(StandardCharsets.UTF_8);
	}

}
