package io.github.ratelimit.internal.redis;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.regex.Pattern;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisFuture;
import io.lettuce.core.RedisURI;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.async.RedisAsyncCommands;
import io.lettuce.core.api.sync.RedisCommands;
import io.lettuce.core.codec.StringCodec;
import io.lettuce.core.output.IntegerOutput;
import io.lettuce.core.protocol.CommandArgs;
import io.lettuce.core.protocol.CommandType;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;

import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.script.RedisScript;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.internal.core.AlgorithmSpec;
import io.github.ratelimit.store.Acquisition;
import io.github.ratelimit.store.RateLimit;
import io.github.ratelimit.store.contract.MutableClock;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Measures the memory Redis needs per identity for one limit of each algorithm, and prints
 * a markdown table (also written to {@code target/redis-memory.md}); the results are in
 * {@code docs/redis-memory.md}. Not part of the normal build: it runs only with
 * {@code -Dratelimit.measure=true}, on a Redis server of its own.
 * <pre>
 * ./mvnw -q -pl ratelimit-spring-boot-autoconfigure test -Dtest=RedisMemoryMeasurement \
 *     -Dratelimit.measure=true -Dsurefire.failIfNoSpecifiedTests=false
 * </pre>
 * For each row: {@code FLUSHALL}, {@code INFO memory} {@code used_memory}, then N identities
 * each acquire from one limit through the store's own script and key layout (pipelined
 * {@code EVALSHA}, at explicit times), then {@code used_memory} again and
 * {@code MEMORY USAGE} of a sample of identities' keys. {@code -Dratelimit.measure.identities}
 * changes N (default 100,000; the logs of 100 and 200 entries use N / 100),
 * {@code -Dratelimit.measure.key-prefix} the key prefix (default {@code ratelimit:}),
 * {@code -Dratelimit.measure.rows} a pattern of the rows to measure (such as
 * {@code TOKEN_BUCKET}), and {@code -Dratelimit.measure.key-layout} the key layout ({@code KEY_PER_BUCKET}, the
 * default, or {@code HASH_PER_SLOT}, where the buckets of one slot share a hash and
 * {@code MEMORY USAGE} is summed over every hash).
 */
@EnabledIfSystemProperty(named = "ratelimit.measure", matches = "true")
class RedisMemoryMeasurement {

	private static final int IDENTITIES = Integer.getInteger("ratelimit.measure.identities", 100_000);

	/** The rows measured: those whose label this matches. */
	private static final Pattern ROWS = Pattern.compile(System.getProperty("ratelimit.measure.rows", ".*"));

	private static final int SAMPLE = 1_000;

	private static final int BATCH = 1_000;

	private static final long T0 = MutableClock.DEFAULT_START_MICROS;

	/** A typical route limit name, named in the key by its id: {@code ratelimit:{ip:10.1.134.160}:<id>}. */
	private static final String LIMIT_NAME = "GET /api/orders/{id}";

	@SuppressWarnings("rawtypes")
	private static final RedisScript<List> SCRIPT = RedisScripts.acquire();

	private static final RedisKeyLayout LAYOUT = RedisKeyLayout
		.valueOf(System.getProperty("ratelimit.measure.key-layout", RedisKeyLayout.KEY_PER_BUCKET.name()));

	/** Only names keys: its connection factory is never started. */
	private static final RedisRateLimitStore KEYS = RedisRateLimitStore.builder(new LettuceConnectionFactory())
		.keyPrefix(System.getProperty("ratelimit.measure.key-prefix", RedisRateLimitStore.DEFAULT_KEY_PREFIX))
		.layout(LAYOUT)
		.build();

	@Test
	void measuresMemoryPerIdentity() throws IOException {
		try (RedisTestServer server = RedisTestServer.start()) {
			RedisClient client = RedisClient.create(RedisURI.create(server.host(), server.port()));
			try (StatefulRedisConnection<String, String> connection = client.connect();
					StatefulRedisConnection<String, String> pipeline = client.connect()) {
				RedisCommands<String, String> redis = connection.sync();
				String sha = redis.scriptLoad(SCRIPT.getScriptAsString());
				assertThat(sha).isEqualTo(SCRIPT.getSha1());
				String version = info(redis, "server", "redis_version");
				pipeline.setAutoFlushCommands(false);
				List<String> rows = new ArrayList<>();
				measure(rows, redis, pipeline, "TOKEN_BUCKET", Algorithm.TOKEN_BUCKET, 1, IDENTITIES);
				measure(rows, redis, pipeline, "LEAKY_BUCKET", Algorithm.LEAKY_BUCKET, 1, IDENTITIES);
				measure(rows, redis, pipeline, "FIXED_WINDOW", Algorithm.FIXED_WINDOW, 1, IDENTITIES);
				measure(rows, redis, pipeline, "SLIDING_WINDOW_COUNTER", Algorithm.SLIDING_WINDOW_COUNTER, 1,
						IDENTITIES);
				measure(rows, redis, pipeline, "SLIDING_WINDOW_LOG, 1 entry", Algorithm.SLIDING_WINDOW_LOG, 1,
						IDENTITIES);
				measure(rows, redis, pipeline, "SLIDING_WINDOW_LOG, 10 entries", Algorithm.SLIDING_WINDOW_LOG, 10,
						IDENTITIES);
				measure(rows, redis, pipeline, "SLIDING_WINDOW_LOG, 100 entries", Algorithm.SLIDING_WINDOW_LOG, 100,
						Math.max(1, IDENTITIES / 100));
				measure(rows, redis, pipeline, "SLIDING_WINDOW_LOG, 200 entries", Algorithm.SLIDING_WINDOW_LOG, 200,
						Math.max(1, IDENTITIES / 100));
				redis.flushall();
				StringBuilder table = new StringBuilder();
				table.append("Redis ")
					.append(version)
					.append(", layout ")
					.append(LAYOUT)
					.append(", token bucket keys like `")
					.append(key(limit(Algorithm.TOKEN_BUCKET, 1), 0))
					.append("`\n\n");
				table.append("| algorithm | identities | keys per identity | encoding | MEMORY USAGE per identity (B) "
						+ "| used_memory per identity (B) |\n");
				table.append("|---|---:|---:|---|---:|---:|\n");
				rows.forEach((row) -> table.append(row).append('\n'));
				System.out.println();
				System.out.println(table);
				Path report = Path.of("target", "redis-memory.md");
				Files.createDirectories(report.getParent());
				Files.writeString(report, table);
			}
			finally {
				client.shutdown(Duration.ZERO, Duration.ofSeconds(2));
			}
		}
	}

	/** Adds the row of a measurement unless {@link #ROWS} leaves it out. */
	private static void measure(List<String> rows, RedisCommands<String, String> redis,
			StatefulRedisConnection<String, String> pipeline, String label, Algorithm algorithm, int entries,
			int identities) {
		if (ROWS.matcher(label).find()) {
			rows.add(row(redis, pipeline, label, algorithm, entries, identities));
		}
	}

	/** Fills N identities of one limit, each with {@code entries} admitted requests, and measures. */
	private static String row(RedisCommands<String, String> redis, StatefulRedisConnection<String, String> pipeline,
			String label, Algorithm algorithm, int entries, int identities) {
		RateLimit limit = limit(algorithm, entries);
		redis.flushall();
		long before = Long.parseLong(info(redis, "memory", "used_memory"));
		long started = System.nanoTime();
		for (int entry = 0; entry < entries; entry++) {
			// a millisecond apart: distinct times, as real requests have
			long now = T0 + entry * 1_000L;
			for (int first = 0; first < identities; first += BATCH) {
				List<RedisFuture<List<Object>>> replies = new ArrayList<>(BATCH);
				for (int i = first; i < Math.min(identities, first + BATCH); i++) {
					replies.add(acquire(pipeline.async(), limit, i, now));
				}
				pipeline.flushCommands();
				for (RedisFuture<List<Object>> reply : replies) {
					// remaining when admitted, -1 - remaining when rejected
					assertThat((Long) reply.toCompletableFuture().join().get(1)).as("admitted").isNotNegative();
				}
			}
		}
		long after = Long.parseLong(info(redis, "memory", "used_memory"));
		System.out.printf("%s: %,d identities in %,d ms%n", label, identities, (System.nanoTime() - started) / 1_000_000);
		List<String> encodings = keys(limit, 0).stream().map(redis::objectEncoding).toList();
		double keysPerIdentity = (double) redis.dbsize() / identities;
		if (KEYS.field(new Acquisition(limit, identity(0), 1)) != null) {
			// buckets share hashes: every hash's usage, over the identities
			long used = 0;
			for (String key : redis.keys("*")) {
				used += memoryUsage(redis, key);
			}
			return String.format("| %s | %,d | %.3f | %s | %,.0f | %,.0f |", label, identities, keysPerIdentity,
					String.join(", ", encodings), (double) used / identities, (double) (after - before) / identities);
		}
		assertThat(redis.dbsize())
			.isEqualTo((long) identities * AlgorithmSpec.of(algorithm).redisKeySuffixes().size());
		Random random = new Random(42);
		long sampled = 0;
		int samples = Math.min(SAMPLE, identities);
		for (int s = 0; s < samples; s++) {
			for (String key : keys(limit, random.nextInt(identities))) {
				sampled += memoryUsage(redis, key);
			}
		}
		return String.format("| %s | %,d | %.0f | %s | %,.0f | %,.0f |", label, identities, keysPerIdentity,
				String.join(", ", encodings), (double) sampled / samples, (double) (after - before) / identities);
	}

	/** {@code MEMORY USAGE}, with SAMPLES 0: every element of a large sorted set or hash, not an estimate. */
	private static long memoryUsage(RedisCommands<String, String> redis, String key) {
		return redis.dispatch(CommandType.MEMORY, new IntegerOutput<>(StringCodec.UTF8),
				new CommandArgs<>(StringCodec.UTF8).add("USAGE").addKey(key).add("SAMPLES").add(0));
	}

	private static RedisFuture<List<Object>> acquire(RedisAsyncCommands<String, String> redis, RateLimit limit,
			int identity, long now) {
		AlgorithmSpec spec = AlgorithmSpec.of(limit.algorithm());
		String field = KEYS.field(new Acquisition(limit, identity(identity), 1));
		return redis.evalsha(SCRIPT.getSha1(), ScriptOutputType.MULTI, keys(limit, identity).toArray(new String[0]),
				Long.toString(now), "acquire", "1", spec.redisCode(), Long.toString(limit.capacity()),
				Long.toString(spec.redisParameter(limit)), "1", (field != null) ? field : "");
	}

	/** 100 (or more) per day: every key's real TTL outlasts the measurement. */
	private static RateLimit limit(Algorithm algorithm, int entries) {
		return RateLimit.of(LIMIT_NAME, algorithm, Math.max(100, entries), Duration.ofDays(1));
	}

	private static List<String> keys(RateLimit limit, int identity) {
		String key = key(limit, identity);
		return AlgorithmSpec.of(limit.algorithm()).redisKeySuffixes().stream().map((suffix) -> key + suffix).toList();
	}

	/** The store's key for the identity numbered {@code i}. */
	private static String key(RateLimit limit, int i) {
		return KEYS.key(new Acquisition(limit, identity(i), 1));
	}

	/** An IPv4 identity, numbered. */
	private static String identity(int i) {
		return "ip:10." + ((i >> 16) & 0xff) + "." + ((i >> 8) & 0xff) + "." + (i & 0xff);
	}

	private static String info(RedisCommands<String, String> redis, String section, String field) {
		for (String line : redis.info(section).split("\r?\n")) {
			if (line.startsWith(field + ":")) {
				return line.substring(field.length() + 1).trim();
			}
		}
		throw new IllegalStateException("INFO " + section + " has no " + field);
	}

}
