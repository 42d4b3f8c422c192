package io.github.ratelimit.benchmarks.local;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.internal.core.RateLimitClock;
import io.github.ratelimit.internal.core.RateLimiter;
import io.github.ratelimit.internal.memory.InMemoryRateLimitStore;
import io.github.ratelimit.store.Acquisition;
import io.github.ratelimit.store.RateLimit;
import io.github.ratelimit.store.RateLimitResult;

/**
 * What reserving a cost and settling it afterwards costs against a plain decision, on the
 * in-memory store through {@link RateLimiter}: one token limit, and a call limited by
 * requests, a token bucket and a window of tokens at once. {@code *Settle} settles at another
 * cost than reserved (a store call); {@code *SettleExact} at the reservation, which the
 * limiter leaves out. Limits no run can exhaust, so every decision admits.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(2)
public class SettleBenchmark {

	/** Tokens reserved per call, as an estimate such as {@code max_tokens}. */
	static final long ESTIMATE = 100;

	/** Tokens used, below the estimate. */
	static final long ACTUAL = 37;

	private RateLimiter limiter;

	private RateLimit requests;

	private RateLimit tokens;

	private RateLimit window;

	@Setup
	public void setUp() {
		this.limiter = new RateLimiter(
				new InMemoryRateLimitStore(RateLimitClock.system(), InMemoryRateLimitStore.DEFAULT_MAXIMUM_KEYS));
		// 10^12 refilled at 10^9 a second: no run empties them
		this.requests = new RateLimit("requests", Algorithm.TOKEN_BUCKET, 1_000_000_000_000L, 1_000_000_000L,
				Duration.ofSeconds(1));
		this.tokens = new RateLimit("tokens", Algorithm.TOKEN_BUCKET, 1_000_000_000_000L, 1_000_000_000L,
				Duration.ofSeconds(1));
		// nearly the most a window of a second holds
		this.window = RateLimit.of("tokens-window", Algorithm.FIXED_WINDOW, 8_000_000_000L, Duration.ofSeconds(1));
	}

	private List<Acquisition> oneLimit() {
		// a request builds its acquisitions afresh, so the benchmark does too
		return List.of(new Acquisition(this.tokens, "tenant", ESTIMATE));
	}

	private List<Acquisition> threeLimits() {
		return List.of(new Acquisition(this.requests, "tenant", 1), new Acquisition(this.tokens, "tenant", ESTIMATE),
				new Acquisition(this.window, "tenant", ESTIMATE));
	}

	/** Whether admitted; a rejection would make the timing meaningless. */
	private static boolean admitted(RateLimitResult decided) {
		if (!decided.allowed()) {
			throw new IllegalStateException("a limit no run can exhaust rejected: " + decided);
		}
		return true;
	}

	@Benchmark
	public boolean oneLimitDecide() {
		return admitted(this.limiter.acquire(oneLimit()));
	}

	@Benchmark
	public boolean oneLimitSettle() {
		List<Acquisition> reserved = oneLimit();
		RateLimitResult decided = this.limiter.acquire(reserved);
		this.limiter.settle(reserved, decided, new long[] { ACTUAL });
		return admitted(decided);
	}

	@Benchmark
	public boolean oneLimitSettleExact() {
		List<Acquisition> reserved = oneLimit();
		RateLimitResult decided = this.limiter.acquire(reserved);
		this.limiter.settle(reserved, decided, new long[] { ESTIMATE });
		return admitted(decided);
	}

	@Benchmark
	public boolean threeLimitsDecide() {
		return admitted(this.limiter.acquire(threeLimits()));
	}

	/** Requests settle at the 1 they reserved; both token limits at the actual tokens. */
	@Benchmark
	public boolean threeLimitsSettle() {
		List<Acquisition> reserved = threeLimits();
		RateLimitResult decided = this.limiter.acquire(reserved);
		this.limiter.settle(reserved, decided, new long[] { 1, ACTUAL, ACTUAL });
		return admitted(decided);
	}

	@Benchmark
	public boolean threeLimitsSettleExact() {
		List<Acquisition> reserved = threeLimits();
		RateLimitResult decided = this.limiter.acquire(reserved);
		this.limiter.settle(reserved, decided, new long[] { 1, ESTIMATE, ESTIMATE });
		return admitted(decided);
	}

}
