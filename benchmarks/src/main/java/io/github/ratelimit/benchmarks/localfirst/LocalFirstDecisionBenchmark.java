package io.github.ratelimit.benchmarks.localfirst;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
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
import io.github.ratelimit.benchmarks.local.Load;
import io.github.ratelimit.internal.core.ShareStore;
import io.github.ratelimit.internal.local.LocalFirstRateLimitStore;
import io.github.ratelimit.internal.core.RateLimitClock;
import io.github.ratelimit.internal.core.RateLimiter;
import io.github.ratelimit.internal.core.ThrottledLog;
import io.github.ratelimit.internal.memory.InMemoryRateLimitStore;
import io.github.ratelimit.store.Acquisition;
import io.github.ratelimit.store.MutableDecision;
import io.github.ratelimit.store.RateLimit;
import io.github.ratelimit.internal.local.LocalFirstSettings;

/**
 * What one decision costs an instance in local-first mode, beside the in-memory store
 * deciding the same limit: one key, through {@link RateLimiter}, with a list of
 * acquisitions ({@code *TokenBucket}) and in place into a reused {@link MutableDecision}
 * ({@code *TokenBucketInPlace}). The local-first store leases from a second in-memory
 * store through {@link ShareStore#over}, standing in for Redis, and syncs with it every
 * 10 ms on its own thread, as in production; so the runs measure the share hit path
 * together with the occasional call to the shared store when a share runs out, and the
 * sync thread's work counts in the CPU time per decision. After each iteration the
 * benchmark prints how many decisions went to the shared store.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(2)
public class LocalFirstDecisionBenchmark {

	@Param({ "ADMIT", "REJECT" })
	Load load;

	private final RateLimitClock clock = RateLimitClock.system();

	private RateLimit limit;

	private RateLimiter inMemory;

	private RateLimiter localFirst;

	private LocalFirstRateLimitStore shares;

	private final AtomicLong sharedCalls = new AtomicLong();

	private final AtomicLong decisions = new AtomicLong();

	@Setup
	public void setUp() {
		this.limit = this.load.limit(Algorithm.TOKEN_BUCKET);
		long keys = InMemoryRateLimitStore.DEFAULT_MAXIMUM_KEYS;
		this.inMemory = new RateLimiter(new InMemoryRateLimitStore(this.clock, keys));
		InMemoryRateLimitStore shared = new InMemoryRateLimitStore(this.clock, keys);
		ShareStore overShared = ShareStore.over(shared, this.clock);
		ShareStore sharing = (leases) -> {
			this.sharedCalls.incrementAndGet();
			return overShared.grant(leases);
		};
		this.shares = new LocalFirstRateLimitStore(shared, sharing, new LocalFirstSettings(this.clock, Duration.ofMillis(10), (any) -> false,
				10_000, new ThrottledLog(TimeUnit.SECONDS.toNanos(1), System::nanoTime), System.err::println));
		this.shares.start();
		this.localFirst = new RateLimiter(this.shares);
		// the first decision of each admits; under REJECT the runs measure the ones after it
		this.inMemory.acquire(List.of(new Acquisition(this.limit, "client", 1)));
		this.localFirst.acquire(List.of(new Acquisition(this.limit, "client", 1)));
	}

	/** What a caller keeps per thread to decide in place. */
	@State(Scope.Thread)
	public static class Decision {

		final MutableDecision decision = new MutableDecision();

	}

	@Benchmark
	public boolean inMemoryTokenBucket() {
		return this.inMemory.acquire(List.of(new Acquisition(this.limit, "client", 1))).allowed();
	}

	@Benchmark
	public boolean inMemoryTokenBucketInPlace(Decision decision) {
		return this.inMemory.acquire(this.limit, "client", 1, 0, decision.decision);
	}

	@Benchmark
	public boolean localFirstTokenBucket() {
		this.decisions.incrementAndGet();
		return this.localFirst.acquire(List.of(new Acquisition(this.limit, "client", 1))).allowed();
	}

	@Benchmark
	public boolean localFirstTokenBucketInPlace(Decision decision) {
		this.decisions.incrementAndGet();
		return this.localFirst.acquire(this.limit, "client", 1, 0, decision.decision);
	}

	/** Prints what part of the local-first decisions of the iteration asked the shared store. */
	@TearDown(Level.Iteration)
	public void reportSharedCalls() {
		long decided = this.decisions.getAndSet(0);
		long calls = this.sharedCalls.getAndSet(0);
		if (decided > 0) {
			System.out.printf("shared-store calls: %d for %d local-first decisions (%.2e per decision)%n", calls,
					decided, (double) calls / decided);
		}
	}

	/** Checks that both stores answered as the load intends, then stops the sync thread. */
	@TearDown
	public void checkAnswers() {
		Decision decision = new Decision();
		this.load.check("inMemoryTokenBucketInPlace", inMemoryTokenBucketInPlace(decision));
		this.load.check("localFirstTokenBucketInPlace", localFirstTokenBucketInPlace(decision));
		this.shares.close();
	}

}
