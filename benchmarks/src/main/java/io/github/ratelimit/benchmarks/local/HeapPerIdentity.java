package io.github.ratelimit.benchmarks.local;

import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;
import java.time.Duration;
import java.util.List;
import java.util.Locale;

import org.openjdk.jol.info.GraphLayout;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.internal.core.RateLimiter;
import io.github.ratelimit.internal.memory.InMemoryRateLimitStore;
import io.github.ratelimit.store.Acquisition;
import io.github.ratelimit.store.RateLimit;

/**
 * Measures the heap one identity costs in the {@link InMemoryRateLimitStore}, for each
 * algorithm: fills a store (bounded at its default of 100,000 keys) with N identities of
 * one limit, each acquiring once (or several times, for the log), and reports the size
 * of the store's object graph as walked by JOL, and the growth of the used heap after a
 * full collection as a cross-check. Both count everything a bucket keeps alive: the cache
 * entry, its key and the identity string in it, the bucket and its algorithm state, and
 * the store's share of the hash table and the cache's bookkeeping.
 *
 * <p>Run with {@code java -cp benchmarks/target/benchmarks.jar
 * io.github.ratelimit.benchmarks.local.HeapPerIdentity [identities] [--footprint]}.
 */
public final class HeapPerIdentity {

	/** 2024-01-01T00:00:00Z, a whole second, so every identity acquires at the same time. */
	private static final long START_MICROS = 1_704_067_200_000_000L;

	private HeapPerIdentity() {
	}

	/**
	 * Prints one Markdown table row per algorithm.
	 * @param args the number of identities (default 100,000), and {@code --footprint} to
	 * print JOL's class histogram of each filled store
	 */
	public static void main(String[] args) {
		// the store's clock and ticker are lambdas, whose hidden classes JOL can only read this way
		System.setProperty("jol.magicFieldOffset", "true");
		int identities = (args.length > 0) ? Integer.parseInt(args[0]) : 100_000;
		boolean footprint = List.of(args).contains("--footprint");
		System.out.println("| algorithm | identities | JOL graph per identity (B) | used heap per identity (B) |");
		System.out.println("|---|---:|---:|---:|");
		for (Row row : Row.values()) {
			// the longest logs with a tenth of the identities, to stay within a default heap
			measure(row, (row.entries >= 100) ? identities / 10 : identities, footprint);
		}
	}

	private static void measure(Row row, int identities, boolean footprint) {
		long[] now = { START_MICROS };
		RateLimit limit = new RateLimit("GET /api/orders/{id}", row.algorithm, Math.max(100, row.entries), 0,
				Duration.ofDays(1));
		InMemoryRateLimitStore store = new InMemoryRateLimitStore(() -> now[0],
				InMemoryRateLimitStore.DEFAULT_MAXIMUM_KEYS);
		RateLimiter limiter = new RateLimiter(store);
		long emptyGraph = GraphLayout.parseInstance(store).totalSize();
		long heapBefore = usedHeapAfterGc();
		for (int entry = 0; entry < row.entries; entry++) {
			now[0] = START_MICROS + entry * 1_000L;
			for (int i = 0; i < identities; i++) {
				// a new string for each identity, as a request produces it
				String identity = new StringBuilder("10.").append(i >> 16)
					.append('.')
					.append((i >> 8) & 0xff)
					.append('.')
					.append(i & 0xff)
					.toString();
				if (!limiter.acquire(List.of(new Acquisition(limit, identity, 1))).allowed()) {
					throw new IllegalStateException("identity " + identity + " was rejected");
				}
			}
		}
		if (store.size() != identities) {
			throw new IllegalStateException("store holds " + store.size() + " buckets, expected " + identities);
		}
		long heapAfter = usedHeapAfterGc();
		GraphLayout graph = GraphLayout.parseInstance(store);
		System.out.printf(Locale.ROOT, "| %s | %,d | %,.0f | %,.0f |%n", row.label, identities,
				(double) (graph.totalSize() - emptyGraph) / identities, (double) (heapAfter - heapBefore) / identities);
		if (footprint) {
			System.out.println(graph.toFootprint());
		}
	}

	private static long usedHeapAfterGc() {
		MemoryMXBean memory = ManagementFactory.getMemoryMXBean();
		long used = Long.MAX_VALUE;
		// collect until the figure settles: one collection may leave garbage another frees
		for (int i = 0; i < 5; i++) {
			System.gc();
			used = Math.min(used, memory.getHeapMemoryUsage().getUsed());
		}
		return used;
	}

	private enum Row {

		TOKEN_BUCKET(Algorithm.TOKEN_BUCKET, 1, "TOKEN_BUCKET"),

		LEAKY_BUCKET(Algorithm.LEAKY_BUCKET, 1, "LEAKY_BUCKET"),

		FIXED_WINDOW(Algorithm.FIXED_WINDOW, 1, "FIXED_WINDOW"),

		SLIDING_WINDOW_COUNTER(Algorithm.SLIDING_WINDOW_COUNTER, 1, "SLIDING_WINDOW_COUNTER"),

		SLIDING_WINDOW_LOG_1(Algorithm.SLIDING_WINDOW_LOG, 1, "SLIDING_WINDOW_LOG, 1 entry"),

		SLIDING_WINDOW_LOG_10(Algorithm.SLIDING_WINDOW_LOG, 10, "SLIDING_WINDOW_LOG, 10 entries"),

		SLIDING_WINDOW_LOG_100(Algorithm.SLIDING_WINDOW_LOG, 100, "SLIDING_WINDOW_LOG, 100 entries");

		private final Algorithm algorithm;

		private final int entries;

		private final String label;

		Row(Algorithm algorithm, int entries, String label) {
			this.algorithm = algorithm;
			this.entries = entries;
			this.label = label;
		}

	}

}
