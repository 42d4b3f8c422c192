package io.github.ratelimit.internal.redis;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.LockSupport;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.core.Cursor;
import org.springframework.data.redis.core.RedisCallback;
import org.springframework.data.redis.core.ScanOptions;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.internal.core.Identities;
import io.github.ratelimit.store.Acquisition;
import io.github.ratelimit.store.RateLimit;
import io.github.ratelimit.store.RateLimitResult;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A flood of distinct identities against the Redis store on Redis time, as a botnet or a
 * client rotating its key would send: every key written carries a TTL no longer than its
 * limit needs, so Redis holds only the identities seen recently and forgets the rest.
 */
class RedisIdentityFloodTests {

	@RegisterExtension
	static final SharedRedisConnection redisConnection = new SharedRedisConnection();

	private static final int IDENTITIES = 100_000;

	private static final int THREADS = 8;

	private static final Duration PERIOD = Duration.ofSeconds(1);

	/** Longest TTL any algorithm needs: a sliding window counter keeps a window for two periods. */
	private static final long MAX_TTL_MILLIS = 2 * PERIOD.toMillis();

	private static final String PREFIX = "flood:";

	@Test
	void keysOfAFloodOfIdentitiesAllExpireAndTheirMemoryIsGivenBack() throws Exception {
		RedisRateLimitStore store = RedisRateLimitStore.builder(redisConnection.factory())
			.keyPrefix(PREFIX)
			.timeout(Duration.ofSeconds(5))
			.build();
		List<RateLimit> limits = new ArrayList<>();
		for (Algorithm algorithm : Algorithm.values()) {
			limits.add(RateLimit.of("flood " + algorithm, algorithm, 2, PERIOD));
		}
		// load the script, then measure from an empty server
		store.tryAcquire(List.of(new Acquisition(limits.get(0), Identities.GLOBAL, 1)));
		RedisTestServer.shared().flushAll();
		long baseline = usedMemory();

		// while the flood runs, keep scanning: a key without a TTL would be seen before it could expire
		TtlCensus census = new TtlCensus();
		AtomicBoolean flooding = new AtomicBoolean(true);
		long start = System.nanoTime();
		ExecutorService executor = Executors.newFixedThreadPool(THREADS + 1);
		try {
			Future<?> watcher = executor.submit(() -> {
				while (flooding.get()) {
					census.scan();
					census.sampleMemory(baseline);
					// leave the CPU to the flood between looks
					LockSupport.parkNanos(Duration.ofMillis(100).toNanos());
				}
			});
			List<Future<?>> slices = new ArrayList<>();
			for (int t = 0; t < THREADS; t++) {
				int first = t * (IDENTITIES / THREADS);
				int last = (t == THREADS - 1) ? IDENTITIES : first + IDENTITIES / THREADS;
				slices.add(executor.submit(() -> flood(store, limits, first, last)));
			}
			for (Future<?> slice : slices) {
				slice.get(120, TimeUnit.SECONDS);
			}
			flooding.set(false);
			watcher.get(30, TimeUnit.SECONDS);
		}
		finally {
			flooding.set(false);
			executor.shutdownNow();
		}
		Duration flood = Duration.ofNanos(System.nanoTime() - start);
		census.scan();
		census.sampleMemory(baseline);

		assertThat(census.withoutTtl).as("keys seen without a TTL").isZero();
		assertThat(census.withTtl).as("keys seen with a TTL").isPositive();
		assertThat(census.longestTtlMillis).as("longest TTL (ms)").isLessThanOrEqualTo(MAX_TTL_MILLIS);
		assertThat(census.peakKeys).as("most keys at once").isPositive().isLessThanOrEqualTo(IDENTITIES * 2L);
		double bytesPerKey = (double) census.peakBytes / census.peakKeys;

		long waitStart = System.nanoTime();
		await().atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(100)).until(() -> dbSize() == 0);
		Duration drained = Duration.ofNanos(System.nanoTime() - waitStart);
		await().atMost(Duration.ofSeconds(10))
			.pollInterval(Duration.ofMillis(100))
			.until(() -> usedMemory() - baseline < 1024 * 1024);
		long usedAfterExpiry = usedMemory();

		System.out.printf("Redis identity flood: %,d identities (%,d calls) in %d ms; %,d TTLs seen in %,d scans, "
				+ "longest %d ms; at most %,d keys at once, used_memory then +%,d bytes (%.0f bytes per key); "
				+ "all keys gone %d ms after the flood, used_memory then +%,d bytes over the empty server%n",
				IDENTITIES, IDENTITIES + IDENTITIES / 5, flood.toMillis(), census.withTtl, census.scans,
				census.longestTtlMillis, census.peakKeys, census.peakBytes, bytesPerKey, drained.toMillis(),
				usedAfterExpiry - baseline);
		assertThat(bytesPerKey).as("bytes per live key").isLessThan(400);
	}

	/**
	 * Identities first to last, each admitted once; of every algorithm, one identity in ten
	 * also asks for more than is left and another one in ten is refunded.
	 */
	private static Void flood(RedisRateLimitStore store, List<RateLimit> limits, int first, int last) {
		for (int i = first; i < last; i++) {
			RateLimit limit = limits.get(i % limits.size());
			Acquisition acquisition = new Acquisition(limit, Identities.principal("flood-user-" + i), 1);
			RateLimitResult result = store.tryAcquire(List.of(acquisition));
			assertThat(result.allowed()).isTrue();
			int round = i / limits.size();
			if (round % 10 == 0) {
				// more than is left: rejected, unless a window ended or tokens came back in between
				store.tryAcquire(List.of(new Acquisition(limit, acquisition.identity(), 2)));
			}
			else if (round % 10 == 5) {
				store.refund(List.of(acquisition), result);
			}
		}
		return null;
	}

	private static long usedMemory() {
		Properties info = redisConnection.template().execute((RedisCallback<Properties>) (connection) -> connection.serverCommands()
			.info("memory"));
		return Long.parseLong(info.getProperty("used_memory"));
	}

	private static long dbSize() {
		return redisConnection.template().execute(RedisConnection::dbSize);
	}

	private static final class TtlCensus {

		long scans;

		long withTtl;

		long withoutTtl;

		long longestTtlMillis;

		long peakKeys;

		long peakBytes;

		/** Keeps the memory used above the baseline when there are the most keys. */
		void sampleMemory(long baseline) {
			long used = usedMemory() - baseline;
			long keys = dbSize();
			if (keys > this.peakKeys) {
				this.peakKeys = keys;
				this.peakBytes = used;
			}
		}

		/** Looks at the TTL of every key there is now. */
		void scan() {
			List<String> batch = new ArrayList<>(10_000);
			try (Cursor<String> keys = redisConnection.template()
				.scan(ScanOptions.scanOptions().match(PREFIX + "*").count(10_000).build())) {
				while (keys.hasNext()) {
					batch.add(keys.next());
					if (batch.size() == 10_000) {
						count(batch);
						batch.clear();
					}
				}
			}
			count(batch);
			this.scans++;
		}

		private void count(List<String> keys) {
			if (keys.isEmpty()) {
				return;
			}
			List<Object> ttls = redisConnection.template().executePipelined((RedisCallback<Object>) (connection) -> {
				for (String key : keys) {
					connection.keyCommands().pTtl(key.getBytes(StandardCharsets.UTF_8));
				}
				return null;
			});
			for (Object ttl : ttls) {
				long millis = (Long) ttl;
				if (millis == -1) {
					this.withoutTtl++;
				}
				else if (millis >= 0) {
					this.withTtl++;
					this.longestTtlMillis = Math.max(this.longestTtlMillis, millis);
				}
				// -2: expired between SCAN and PTTL
			}
		}

	}

}
