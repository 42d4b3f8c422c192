package io.github.ratelimit.benchmarks.local;

import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

import io.github.bucket4j.Bucket;
import io.github.bucket4j.local.SynchronizationStrategy;
import io.github.resilience4j.ratelimiter.internal.AtomicRateLimiter;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;
import org.openjdk.jmh.infra.BenchmarkParams;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.internal.core.RateLimitClock;
import io.github.ratelimit.internal.core.RateLimiter;
import io.github.ratelimit.internal.memory.InMemoryRateLimitStore;
import io.github.ratelimit.store.Acquisition;
import io.github.ratelimit.store.MutableDecision;
import io.github.ratelimit.store.RateLimit;

/**
 * Cost of one decision when the requests come from many identities: each decision first
 * finds (or creates) the identity's bucket. This library looks it up in the store's own
 * table (with a list of acquisitions, and in place), and beside it in the same store
 * design on a Caffeine cache ({@link CaffeineBucketStore}); the peers, which have no store
 * of their own for local buckets, in a {@link ConcurrentHashMap} with
 * {@code computeIfAbsent}, the usual way to hold them. Every identity has its bucket
 * before the runs start; every thread walks all identities in a scattered order from its
 * own starting point.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(2)
public class ManyKeysDecisionBenchmark {

	/** Number of identities; the store is bounded at twice as many so that none is evicted. */
	static final int IDENTITIES = 100_000;

	/** Step through the identities, coprime to their number so that a walk visits each once. */
	private static final int STRIDE = 7_919;

	@Param({ "ADMIT" })
	Load load;

	/**
	 * {@code PART_USED}: before the runs, every identity takes a thousandth of its token
	 * bucket's quota, which takes a thousand seconds to come back, so this library's store
	 * holds every bucket throughout, as it does for a client whose quota is in use, and the
	 * runs measure finding it. {@code WHOLE}: buckets are left whole; under the ADMIT load
	 * a token comes back within a microsecond, so a token bucket is whole again long before
	 * its identity's next turn, and the store, for which a whole bucket is the same as no
	 * bucket, drops it when it comes across it and makes it again at the next turn. The
	 * peers keep every bucket either way; the windows are used within every second, so the
	 * store holds them either way.
	 */
	@Param({ "PART_USED" })
	String quota;

	private final String[] identities = new String[IDENTITIES];

	private RateLimit tokenBucketLimit;

	private RateLimit slidingWindowCounterLimit;

	private RateLimiter limiter;

	private RateLimiter caffeineLimiter;

	private final Map<String, Bucket> bucket4jLockFree = new ConcurrentHashMap<>();

	private final Map<String, Bucket> bucket4jSynchronized = new ConcurrentHashMap<>();

	private final Map<String, com.google.common.util.concurrent.RateLimiter> guava = new ConcurrentHashMap<>();

	private final Map<String, AtomicRateLimiter> resilience4j = new ConcurrentHashMap<>();

	@Setup
	public void setUp(BenchmarkParams params) {
		for (int i = 0; i < IDENTITIES; i++) {
			this.identities[i] = "10." + (i >> 16) + "." + ((i >> 8) & 0xff) + "." + (i & 0xff);
		}
		this.tokenBucketLimit = this.load.limit(Algorithm.TOKEN_BUCKET);
		this.slidingWindowCounterLimit = this.load.limit(Algorithm.SLIDING_WINDOW_COUNTER);
		this.limiter = new RateLimiter(new InMemoryRateLimitStore(RateLimitClock.system(), 2L * IDENTITIES));
		this.caffeineLimiter = new RateLimiter(new CaffeineBucketStore(RateLimitClock.system(), 2L * IDENTITIES));
		// every identity already has its bucket, as in a service that has been running: the runs measure
		// finding and deciding, not creating (only the benchmark's own buckets, to keep the heap alike)
		String benchmark = params.getBenchmark().substring(params.getBenchmark().lastIndexOf('.') + 1);
		Cursor cursor = new Cursor();
		for (int i = 0; i < IDENTITIES; i++) {
			switch (benchmark) {
				case "oursTokenBucket" -> oursTokenBucket(cursor);
				case "oursSlidingWindowCounter" -> oursSlidingWindowCounter(cursor);
				case "oursTokenBucketInPlace" -> oursTokenBucketInPlace(cursor);
				case "oursSlidingWindowCounterInPlace" -> oursSlidingWindowCounterInPlace(cursor);
				case "caffeineStoreTokenBucket" -> caffeineStoreTokenBucket(cursor);
				case "bucket4jLockFree" -> bucket4jLockFree(cursor);
				case "bucket4jSynchronized" -> bucket4jSynchronized(cursor);
				case "guava" -> guava(cursor);
				case "resilience4j" -> resilience4j(cursor);
				default -> throw new IllegalStateException("no buckets to create for " + benchmark);
			}
		}
		if ("PART_USED".equals(this.quota)) {
			RateLimiter tokenBuckets = switch (benchmark) {
				case "oursTokenBucket", "oursTokenBucketInPlace" -> this.limiter;
				case "caffeineStoreTokenBucket" -> this.caffeineLimiter;
				default -> null;
			};
			long share = this.tokenBucketLimit.capacity() / 1_000;
			for (int i = 0; tokenBuckets != null && i < IDENTITIES; i++) {
				this.load.check(benchmark, tokenBuckets
					.acquire(List.of(new Acquisition(this.tokenBucketLimit, this.identities[i], share)))
					.allowed());
			}
		}
	}

	/** Each thread's position in the walk over the identities, and what it decides in place into. */
	@State(Scope.Thread)
	public static class Cursor {

		final MutableDecision decision = new MutableDecision();

		private int index;

		@Setup
		public void setUp() {
			this.index = ThreadLocalRandom.current().nextInt(IDENTITIES);
		}

		String next(String[] identities) {
			this.index += STRIDE;
			if (this.index >= IDENTITIES) {
				this.index -= IDENTITIES;
			}
			return identities[this.index];
		}

	}

	/** Checks after each run that every limiter answered as the load intends. */
	@TearDown
	public void checkAnswers() {
		Cursor cursor = new Cursor();
		this.load.check("oursTokenBucket", oursTokenBucket(cursor));
		this.load.check("oursSlidingWindowCounter", oursSlidingWindowCounter(cursor));
		this.load.check("oursTokenBucketInPlace", oursTokenBucketInPlace(cursor));
		this.load.check("oursSlidingWindowCounterInPlace", oursSlidingWindowCounterInPlace(cursor));
		this.load.check("caffeineStoreTokenBucket", caffeineStoreTokenBucket(cursor));
		this.load.check("bucket4jLockFree", bucket4jLockFree(cursor));
		this.load.check("bucket4jSynchronized", bucket4jSynchronized(cursor));
		this.load.check("guava", guava(cursor));
		this.load.check("resilience4j", resilience4j(cursor));
	}

	@Benchmark
	public boolean oursTokenBucket(Cursor cursor) {
		return this.limiter.acquire(List.of(new Acquisition(this.tokenBucketLimit, cursor.next(this.identities), 1)))
			.allowed();
	}

	@Benchmark
	public boolean oursSlidingWindowCounter(Cursor cursor) {
		return this.limiter
			.acquire(List.of(new Acquisition(this.slidingWindowCounterLimit, cursor.next(this.identities), 1)))
			.allowed();
	}

	@Benchmark
	public boolean oursTokenBucketInPlace(Cursor cursor) {
		return this.limiter.acquire(this.tokenBucketLimit, cursor.next(this.identities), 1, 0, cursor.decision);
	}

	@Benchmark
	public boolean oursSlidingWindowCounterInPlace(Cursor cursor) {
		return this.limiter.acquire(this.slidingWindowCounterLimit, cursor.next(this.identities), 1, 0,
				cursor.decision);
	}

	@Benchmark
	public boolean caffeineStoreTokenBucket(Cursor cursor) {
		return this.caffeineLimiter
			.acquire(List.of(new Acquisition(this.tokenBucketLimit, cursor.next(this.identities), 1)))
			.allowed();
	}

	@Benchmark
	public boolean bucket4jLockFree(Cursor cursor) {
		return this.bucket4jLockFree
			.computeIfAbsent(cursor.next(this.identities), (key) -> this.load.bucket4j(SynchronizationStrategy.LOCK_FREE))
			.tryConsume(1);
	}

	@Benchmark
	public boolean bucket4jSynchronized(Cursor cursor) {
		return this.bucket4jSynchronized
			.computeIfAbsent(cursor.next(this.identities),
					(key) -> this.load.bucket4j(SynchronizationStrategy.SYNCHRONIZED))
			.tryConsume(1);
	}

	@Benchmark
	public boolean guava(Cursor cursor) {
		return this.guava.computeIfAbsent(cursor.next(this.identities), (key) -> this.load.guava()).tryAcquire();
	}

	@Benchmark
	public boolean resilience4j(Cursor cursor) {
		return this.resilience4j.computeIfAbsent(cursor.next(this.identities), (key) -> this.load.resilience4j())
			.acquirePermission();
	}

}
