package io.github.ratelimit.benchmarks.local;

import java.util.List;
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

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.internal.core.BucketState;
import io.github.ratelimit.internal.core.RateLimitClock;
import io.github.ratelimit.internal.core.RateLimiter;
import io.github.ratelimit.internal.memory.InMemoryRateLimitStore;
import io.github.ratelimit.store.Acquisition;
import io.github.ratelimit.store.MutableDecision;
import io.github.ratelimit.store.RateLimit;
import io.github.ratelimit.store.RateLimitDecision;

/**
 * Cost of one decision on one shared key: every thread of a run decides on the same
 * bucket, so with {@code -t 2} the threads contend for it. This library is measured
 * through {@link RateLimiter} over {@link InMemoryRateLimitStore}, key lookup included,
 * both with a list of acquisitions and a result ({@code ours*}) and with the
 * single-acquisition path that writes into a reused {@link MutableDecision}
 * ({@code ours*InPlace}); beside it the same store design on a Caffeine cache
 * ({@link CaffeineBucketStore}), and the bare algorithm under the same lock the store
 * takes. The peers are one bucket object held by the caller.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(2)
public class OneKeyDecisionBenchmark {

	/** The benchmarks, in the order {@link #decideAll()} answers. */
	private static final String[] NAMES = { "oursTokenBucket", "oursSlidingWindowCounter", "oursTokenBucketInPlace",
			"oursSlidingWindowCounterInPlace", "caffeineStoreTokenBucket", "oursTokenBucketBare",
			"oursSlidingWindowCounterBare", "bucket4jLockFree", "bucket4jSynchronized", "guava", "resilience4j" };

	@Param({ "ADMIT", "REJECT" })
	Load load;

	private RateLimiter limiter;

	private RateLimiter caffeineLimiter;

	private RateLimit tokenBucketLimit;

	private RateLimit slidingWindowCounterLimit;

	private BucketState tokenBucketState;

	private BucketState slidingWindowCounterState;

	private final RateLimitClock clock = RateLimitClock.system();

	private Bucket bucket4jLockFree;

	private Bucket bucket4jSynchronized;

	private com.google.common.util.concurrent.RateLimiter guava;

	private AtomicRateLimiter resilience4j;

	@Setup
	public void setUp() {
		this.tokenBucketLimit = this.load.limit(Algorithm.TOKEN_BUCKET);
		this.slidingWindowCounterLimit = this.load.limit(Algorithm.SLIDING_WINDOW_COUNTER);
		this.limiter = new RateLimiter(new InMemoryRateLimitStore(this.clock, InMemoryRateLimitStore.DEFAULT_MAXIMUM_KEYS));
		this.caffeineLimiter = new RateLimiter(
				new CaffeineBucketStore(this.clock, InMemoryRateLimitStore.DEFAULT_MAXIMUM_KEYS));
		this.tokenBucketState = BucketState.create(this.tokenBucketLimit);
		this.slidingWindowCounterState = BucketState.create(this.slidingWindowCounterLimit);
		this.bucket4jLockFree = this.load.bucket4j(SynchronizationStrategy.LOCK_FREE);
		this.bucket4jSynchronized = this.load.bucket4j(SynchronizationStrategy.SYNCHRONIZED);
		this.guava = this.load.guava();
		this.resilience4j = this.load.resilience4j();
		// the first decision of every limiter admits; under REJECT the runs measure the ones after it
		decideAll();
	}

	/** What a caller keeps per thread to decide in place. */
	@State(Scope.Thread)
	public static class Decision {

		final MutableDecision decision = new MutableDecision();

	}

	@Benchmark
	public boolean oursTokenBucket() {
		// a request builds its acquisition afresh, so the benchmark does too
		return this.limiter.acquire(List.of(new Acquisition(this.tokenBucketLimit, "client", 1))).allowed();
	}

	@Benchmark
	public boolean oursSlidingWindowCounter() {
		return this.limiter.acquire(List.of(new Acquisition(this.slidingWindowCounterLimit, "client", 1))).allowed();
	}

	@Benchmark
	public boolean oursTokenBucketInPlace(Decision decision) {
		return this.limiter.acquire(this.tokenBucketLimit, "client", 1, 0, decision.decision);
	}

	@Benchmark
	public boolean oursSlidingWindowCounterInPlace(Decision decision) {
		return this.limiter.acquire(this.slidingWindowCounterLimit, "client", 1, 0, decision.decision);
	}

	@Benchmark
	public boolean caffeineStoreTokenBucket() {
		return this.caffeineLimiter.acquire(List.of(new Acquisition(this.tokenBucketLimit, "client", 1))).allowed();
	}

	@Benchmark
	public boolean oursTokenBucketBare() {
		return decide(this.tokenBucketState, this.tokenBucketLimit);
	}

	@Benchmark
	public boolean oursSlidingWindowCounterBare() {
		return decide(this.slidingWindowCounterState, this.slidingWindowCounterLimit);
	}

	@Benchmark
	public boolean bucket4jLockFree() {
		return this.bucket4jLockFree.tryConsume(1);
	}

	@Benchmark
	public boolean bucket4jSynchronized() {
		return this.bucket4jSynchronized.tryConsume(1);
	}

	@Benchmark
	public boolean guava() {
		return this.guava.tryAcquire();
	}

	@Benchmark
	public boolean resilience4j() {
		return this.resilience4j.acquirePermission();
	}

	/** Checks after each run that every limiter answered as the load intends. */
	@TearDown
	public void checkAnswers() {
		boolean[] answers = decideAll();
		for (int i = 0; i < answers.length; i++) {
			this.load.check(NAMES[i], answers[i]);
		}
	}

	private boolean[] decideAll() {
		Decision decision = new Decision();
		return new boolean[] { oursTokenBucket(), oursSlidingWindowCounter(), oursTokenBucketInPlace(decision),
				oursSlidingWindowCounterInPlace(decision), caffeineStoreTokenBucket(), oursTokenBucketBare(),
				oursSlidingWindowCounterBare(), bucket4jLockFree(), bucket4jSynchronized(), guava(), resilience4j() };
	}

	/** What the store does for one acquisition once it holds the bucket: read the clock, lock, check, commit. */
	private boolean decide(BucketState state, RateLimit limit) {
		long now = this.clock.nowMicros();
		synchronized (state) {
			RateLimitDecision decision = state.check(limit, now, 1);
			if (decision.allowed()) {
				state.commit(limit, now, 1);
			}
			return decision.allowed();
		}
	}

}
