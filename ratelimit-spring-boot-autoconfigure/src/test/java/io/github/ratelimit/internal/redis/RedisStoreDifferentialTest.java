package io.github.ratelimit.internal.redis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.internal.memory.InMemoryRateLimitStore;
import io.github.ratelimit.store.Acquisition;
import io.github.ratelimit.store.RateLimit;
import io.github.ratelimit.store.RateLimitDecision;
import io.github.ratelimit.store.RateLimitResult;
import io.github.ratelimit.store.RateLimitStore;
import io.github.ratelimit.store.contract.MutableClock;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The Lua scripts against the Java algorithms, which define the semantics: seeded random
 * sequences of (time advance, cost), with the odd refund or settlement at an actual cost
 * (given back, or charged into debt), decided by the in-memory store
 * and by the Redis store on one clock must give identical decisions (allowed, remaining,
 * reset, retry-after, delay) at identical times. A failure names the seed, the sequence
 * and every step up to the difference.
 * <p>
 * The clock is synthetic but Redis expires keys in real time, so the periods are long
 * (an hour and more): no key may expire while a sequence still needs it, which each
 * step checks. Stale state left behind by large synthetic jumps is the scripts' to ignore,
 * as it is in production between two expiry cycles.
 */
class RedisStoreDifferentialTest {

	@RegisterExtension
	static final SharedRedisConnection redisConnection = new SharedRedisConnection();

	private static final long SEED = 0x5eed_2024L;

	private static final int SEQUENCES = 30;

	private static final int STEPS = 40;

	/** 2024-01-01T00:00:00Z. */
	private static final long T0 = MutableClock.DEFAULT_START_MICROS;

	/** Long enough for real TTLs (at least period / 100 for a bucket); odd ones misalign windows and intervals. */
	private static final Duration[] PERIODS = { Duration.ofHours(1), Duration.ofHours(1).plusNanos(3_000),
			Duration.ofMillis(7_300_000).plusNanos(1_000), Duration.ofDays(1) };

	/** Least real TTL a key may have left at any step: far more than a step takes. */
	private static final long MIN_TTL_MILLIS = 1_000;

	@BeforeEach
	void flush() {
		RedisTestServer.shared().flushAll();
	}

	@ParameterizedTest
	@EnumSource(Algorithm.class)
	void decidesLikeTheInMemoryStoreOnRandomSequences(Algorithm algorithm) {
		Random random = new Random(SEED + algorithm.ordinal());
		for (int sequence = 0; sequence < SEQUENCES; sequence++) {
			RateLimit limit = randomLimit(random, "limit-" + sequence, algorithm);
			compare(random, "seed " + (SEED + algorithm.ordinal()) + ", sequence " + sequence, sequence,
					List.of(limit), false);
		}
	}

	@ParameterizedTest
	@EnumSource(value = Algorithm.class, names = "CONCURRENCY", mode = EnumSource.Mode.EXCLUDE)
	void settlesLikeTheInMemoryStoreOnRandomSequences(Algorithm algorithm) {
		Random random = new Random(SEED + 100 + algorithm.ordinal());
		for (int sequence = 0; sequence < SEQUENCES; sequence++) {
			RateLimit limit = randomLimit(random, "limit-" + sequence, algorithm);
			compare(random, "seed " + (SEED + 100 + algorithm.ordinal()) + ", sequence " + sequence, sequence,
					List.of(limit), true);
		}
	}

	@Test
	void decidesSeveralLimitsTogetherLikeTheInMemoryStore() {
		Random random = new Random(SEED);
		Algorithm[] algorithms = Algorithm.values();
		for (int sequence = 0; sequence < SEQUENCES; sequence++) {
			List<RateLimit> limits = new ArrayList<>();
			int count = 2 + random.nextInt(3);
			for (int i = 0; i < count; i++) {
				Algorithm algorithm = algorithms[random.nextInt(algorithms.length)];
				limits.add(randomLimit(random, "limit-" + i, algorithm));
			}
			compare(random, "seed " + SEED + ", sequence " + sequence, sequence, limits, false);
		}
	}

	/** Runs one random sequence on both stores, asserting the same result at every step. */
	private static void compare(Random random, String name, int sequence, List<RateLimit> limits,
			boolean settles) {
		long start = T0 + Math.floorMod(random.nextLong(), limits.get(0).periodMicros());
		MutableClock clock = new MutableClock(start);
		RateLimitStore memory = new InMemoryRateLimitStore(clock, 1_000);
		RedisRateLimitStore redis = RedisRateLimitStore.builder(redisConnection.factory())
			.keyPrefix("diff:")
			.clock(clock)
			.build();
		String identity = "user:" + sequence;
		List<String> keys = new ArrayList<>();
		for (RateLimit limit : limits) {
			String key = redis.key(new Acquisition(limit, identity, 1));
			keys.add(key);
			if (limit.algorithm() == Algorithm.SLIDING_WINDOW_LOG) {
				keys.add(key + ":sum");
			}
		}
		RateLimitResult last = null;
		List<RateLimitResult> admitted = new ArrayList<>();
		List<List<Acquisition>> admittedAcquisitions = new ArrayList<>();
		StringBuilder history = new StringBuilder(name).append(", limits ").append(limits).append(", start T0+")
			.append(start - T0);
		for (int step = 0; step < STEPS; step++) {
			long advance = randomAdvance(random, limits.get(0), last);
			clock.advanceMicros(advance);
			history.append("\n  step ").append(step).append(": +").append(advance).append("µs");
			if (!admitted.isEmpty() && random.nextInt(10) == 0) {
				// give back one of the last few admitted requests, as a later stage's rejection would
				int index = admitted.size() - 1 - random.nextInt(Math.min(3, admitted.size()));
				RateLimitResult result = admitted.remove(index);
				List<Acquisition> acquisitions = admittedAcquisitions.remove(index);
				memory.refund(acquisitions, result);
				redis.refund(acquisitions, result);
				history.append(" refund of the request at T0+").append(result.timestampMicros() - T0);
				continue;
			}
			if (settles && !admitted.isEmpty() && random.nextInt(3) == 0) {
				// settle one of the last few admitted requests at actual costs below, at or beyond
				// what they reserved, up to twice the capacity
				int index = admitted.size() - 1 - random.nextInt(Math.min(3, admitted.size()));
				RateLimitResult result = admitted.remove(index);
				List<Acquisition> acquisitions = admittedAcquisitions.remove(index);
				long[] actual = new long[acquisitions.size()];
				for (int i = 0; i < actual.length; i++) {
					actual[i] = random.nextInt((int) (2 * acquisitions.get(i).limit().capacity()) + 1);
				}
				memory.settle(acquisitions, result, actual);
				redis.settle(acquisitions, result, actual);
				history.append(" settlement of the request at T0+")
					.append(result.timestampMicros() - T0)
					.append(" at ")
					.append(Arrays.toString(actual));
				continue;
			}
			List<Acquisition> acquisitions = new ArrayList<>();
			for (RateLimit limit : limits) {
				acquisitions.add(new Acquisition(limit, identity, randomCost(random, limit)));
			}
			history.append(" costs ").append(acquisitions.stream().map(Acquisition::cost).toList());
			RateLimitResult expected = memory.tryAcquire(acquisitions);
			RateLimitResult actual = redis.tryAcquire(acquisitions);
			history.append(" -> ").append(expected.decisions());
			assertThat(actual.decisions()).as(history::toString).isEqualTo(expected.decisions());
			assertThat(actual.timestampMicros()).as(history::toString).isEqualTo(expected.timestampMicros());
			assertNoKeyExpiresSoon(keys, history);
			last = expected;
			if (expected.allowed()) {
				admitted.add(expected);
				admittedAcquisitions.add(acquisitions);
			}
		}
	}

	private static RateLimit randomLimit(Random random, String name, Algorithm algorithm) {
		long capacity = (random.nextInt(4) == 0) ? 1 + random.nextInt(50) : 1 + random.nextInt(8);
		long refill = (random.nextBoolean()) ? 0 : 1 + random.nextInt((int) (2 * capacity));
		Duration period = PERIODS[random.nextInt(PERIODS.length)];
		return new RateLimit(name, algorithm, capacity, refill, period);
	}

	/**
	 * Mostly the same instant or a little later, sometimes exactly the reset or retry-after
	 * of the last decision, sometimes past a window or a whole refill.
	 */
	private static long randomAdvance(Random random, RateLimit limit, RateLimitResult last) {
		long span = limit.quotaWindowMicros();
		int kind = random.nextInt(20);
		if (kind < 5) {
			return 0;
		}
		if (kind < 7) {
			return 1 + random.nextInt(1_000);
		}
		if (kind < 10 && last != null) {
			RateLimitDecision decision = last.decisions().get(random.nextInt(last.decisions().size()));
			return (decision.allowed() || random.nextBoolean()) ? decision.resetMicros()
					: decision.retryAfterMicros();
		}
		if (kind < 14) {
			return 1 + Math.floorMod(random.nextLong(), Math.max(1, span / limit.capacity()));
		}
		if (kind < 18) {
			return 1 + Math.floorMod(random.nextLong(), span);
		}
		return 1 + Math.floorMod(random.nextLong(), 3 * span);
	}

	/**
	 * Redis expires in real time: the comparison holds only while nothing the sequence
	 * needs is gone, so every key either is absent or has a TTL to spare.
	 */
	private static void assertNoKeyExpiresSoon(List<String> keys, StringBuilder history) {
		for (String key : keys) {
			long ttl = redisConnection.template().getExpire(key, TimeUnit.MILLISECONDS);
			if (ttl != -2) {
				assertThat(ttl).as(() -> "PTTL of " + key + " after\n" + history).isGreaterThan(MIN_TTL_MILLIS);
			}
		}
	}

	private static long randomCost(Random random, RateLimit limit) {
		int kind = random.nextInt(10);
		if (kind < 6) {
			return 1;
		}
		if (kind < 9) {
			return 1 + random.nextInt((int) Math.min(limit.capacity(), 5));
		}
		return limit.capacity();
	}

}
