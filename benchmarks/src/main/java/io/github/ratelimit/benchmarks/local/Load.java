package io.github.ratelimit.benchmarks.local;

import java.time.Duration;

import com.google.common.util.concurrent.RateLimiter;
import io.github.bucket4j.Bucket;
import io.github.bucket4j.local.SynchronizationStrategy;
import io.github.resilience4j.ratelimiter.RateLimiterConfig;
import io.github.resilience4j.ratelimiter.internal.AtomicRateLimiter;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.store.RateLimit;

/**
 * The two loads the in-memory benchmarks decide under, expressed as the same limit in
 * every library. {@link #ADMIT} is a limit no benchmark run can exhaust, so every decision
 * admits; {@link #REJECT} allows one request per hour, so every decision after the first
 * rejects.
 */
public enum Load {

	/**
	 * A limit so large that every decision of a run admits: buckets of 10^12 refilled at
	 * 10^9 per second (Bucket4j's highest rate, one token per nanosecond), windows of 10^9.
	 */
	ADMIT(1_000_000_000_000L, 1_000_000_000L, 1_000_000_000L, Integer.MAX_VALUE, Duration.ofSeconds(1)),

	/** One request per hour: every decision after the first rejects. */
	REJECT(1, 1, 1, 1, Duration.ofHours(1));

	private final long bucketCapacity;

	private final long refillTokens;

	private final long windowCapacity;

	private final int resilience4jPermits;

	private final Duration period;

	/**
	 * What every decision of a run under this load answers, after the first.
	 * @return whether decisions admit
	 */
	public boolean admits() {
		return this == ADMIT;
	}

	/**
	 * Fails when a limiter answered differently than this load promises, which would make
	 * its timing meaningless.
	 * @param name the limiter
	 * @param allowed its latest answer
	 */
	public void check(String name, boolean allowed) {
		if (allowed != admits()) {
			throw new IllegalStateException(name + " answered " + allowed + " under load " + this);
		}
	}

	Load(long bucketCapacity, long refillTokens, long windowCapacity, int resilience4jPermits, Duration period) {
		this.bucketCapacity = bucketCapacity;
		this.refillTokens = refillTokens;
		this.windowCapacity = windowCapacity;
		this.resilience4jPermits = resilience4jPermits;
		this.period = period;
	}

	/**
	 * This load as a limit of this library, named after its algorithm.
	 * @param algorithm the algorithm
	 * @return the limit
	 */
	public RateLimit limit(Algorithm algorithm) {
		// the window algorithms bound capacity × period to 2^53 µs, so they get a smaller (still unreachable) capacity
		if (algorithm == Algorithm.TOKEN_BUCKET || algorithm == Algorithm.LEAKY_BUCKET) {
			return new RateLimit(algorithm.name(), algorithm, this.bucketCapacity, this.refillTokens, this.period);
		}
		return RateLimit.of(algorithm.name(), algorithm, this.windowCapacity, this.period);
	}

	/**
	 * This load as a Bucket4j local bucket with greedy refill.
	 * @param strategy how the bucket synchronises its state
	 * @return a new bucket
	 */
	public Bucket bucket4j(SynchronizationStrategy strategy) {
		return Bucket.builder()
			.addLimit((limit) -> limit.capacity(this.bucketCapacity).refillGreedy(this.refillTokens, this.period))
			.withSynchronizationStrategy(strategy)
			.build();
	}

	/**
	 * This load as a Guava smooth bursty rate limiter.
	 * @return a new limiter
	 */
	@SuppressWarnings("UnstableApiUsage")
	public RateLimiter guava() {
		return RateLimiter.create(this.refillTokens / (this.period.toNanos() / 1e9));
	}

	/**
	 * This load as a Resilience4j atomic rate limiter that never waits for a permission.
	 * @return a new limiter
	 */
	public AtomicRateLimiter resilience4j() {
		return new AtomicRateLimiter("bench",
				RateLimiterConfig.custom()
					.limitForPeriod(this.resilience4jPermits)
					.limitRefreshPeriod(this.period)
					.timeoutDuration(Duration.ZERO)
					.build());
	}

}
