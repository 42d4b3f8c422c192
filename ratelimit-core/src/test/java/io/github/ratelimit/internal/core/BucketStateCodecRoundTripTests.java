package io.github.ratelimit.internal.core;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.List;

import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.Tuple;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.store.RateLimit;
import io.github.ratelimit.store.RateLimitDecision;
import io.github.ratelimit.store.contract.MutableClock;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A state written to bytes and read back at random points of a random sequence of
 * requests decides every later request exactly as the state that never left memory.
 */
class BucketStateCodecRoundTripTests {

	private static final long START = MutableClock.DEFAULT_START_MICROS;

	@Property(tries = 300)
	void aDecodedStateDecidesAsTheOriginal(@ForAll("scenarios") Scenario scenario) {
		Algorithm algorithm = scenario.limit().algorithm();
		BucketState original = BucketState.create(scenario.limit());
		BucketState copy = BucketState.create(scenario.limit());
		Deque<Admitted> admitted = new ArrayDeque<>();
		long now = scenario.start();
		for (Step step : scenario.steps()) {
			now += step.advanceMicros();
			RateLimit limit = step.otherPlan() ? scenario.otherPlan() : scenario.limit();
			if (step.roundTrip()) {
				copy = BucketStateCodec.decode(algorithm, BucketStateCodec.encode(copy));
			}
			RateLimitDecision checked = original.check(limit, now, step.cost(), step.maxDelayMicros());
			assertThat(copy.check(limit, now, step.cost(), step.maxDelayMicros())).as("check at %d", now)
				.isEqualTo(checked);
			RateLimitDecision decided = Requests.acquire(original, limit, now, step.cost());
			assertThat(Requests.acquire(copy, limit, now, step.cost())).as("acquire at %d", now).isEqualTo(decided);
			if (decided.allowed()) {
				admitted.push(new Admitted(limit, now, step.cost()));
			}
			if (step.refund() && !admitted.isEmpty()) {
				Admitted last = admitted.pop();
				original.refund(last.limit(), last.time(), last.cost());
				copy.refund(last.limit(), last.time(), last.cost());
			}
		}
		assertThat(BucketStateCodec.encode(copy)).isEqualTo(BucketStateCodec.encode(original));
	}

	@Provide
	Arbitrary<Scenario> scenarios() {
		Arbitrary<RateLimit> limits = Combinators
			.combine(Arbitraries.of(Algorithm.values()), Arbitraries.longs().between(1, 8),
					Arbitraries.longs().between(1, 8), Arbitraries.of(1L, 2L, 3L, 7L, 10L, 1_000L, 1_001L))
			.as((algorithm, capacity, refill, periodMillis) -> new RateLimit("codec", algorithm, capacity, refill,
					Duration.ofMillis(periodMillis)));
		return limits.flatMap((limit) -> Combinators
			.combine(Arbitraries.longs().between(0, limit.periodMicros() - 1),
					steps(limit).list().ofMinSize(1).ofMaxSize(40), Arbitraries.longs().between(1, 8),
					Arbitraries.longs().between(1, 8))
			.as((offset, steps, capacity, refill) -> new Scenario(limit, otherPlan(limit, capacity, refill),
					START + offset, steps)));
	}

	/**
	 * The same limit under another plan: another refill and a capacity no smaller (every
	 * cost drawn must fit it), the same period.
	 */
	private static RateLimit otherPlan(RateLimit limit, long capacity, long refill) {
		return new RateLimit("codec", limit.algorithm(), Math.max(capacity, limit.capacity()), refill,
				Duration.ofNanos(limit.periodMicros() * 1_000));
	}

	private static Arbitrary<Step> steps(RateLimit limit) {
		long period = limit.periodMicros();
		long interval = limit.emissionIntervalMicros();
		Arbitrary<Long> advances = Arbitraries.frequencyOf(Tuple.of(4, Arbitraries.just(0L)),
				Tuple.of(3, Arbitraries.longs().between(1, Math.max(1, interval))),
				Tuple.of(3, Arbitraries.longs().between(1, Math.max(1, period / 4))),
				Tuple.of(2, Arbitraries.longs().between(period / 4, 2 * period)),
				Tuple.of(1, Arbitraries.of(period, interval, period - 1, interval - 1)));
		Arbitrary<Long> costs = Arbitraries.frequencyOf(Tuple.of(3, Arbitraries.just(1L)),
				Tuple.of(1, Arbitraries.longs().between(1, limit.capacity())));
		Arbitrary<Long> maxDelays = Arbitraries.of(0L, 0L, 1_000L, 10_000_000L);
		return Combinators
			.combine(advances, costs, maxDelays, Arbitraries.integers().between(0, 2),
					Arbitraries.integers().between(0, 4), Arbitraries.integers().between(0, 3))
			.as((advance, cost, maxDelay, roundTrip, refund, plan) -> new Step(advance, cost, maxDelay,
					roundTrip == 0, refund == 0, plan == 0));
	}

	/**
	 * One request: whether the copy is written and read back before it, whether it comes
	 * under the other plan, and whether the last admitted request is refunded after it.
	 */
	record Step(long advanceMicros, long cost, long maxDelayMicros, boolean roundTrip, boolean refund,
			boolean otherPlan) {
	}

	/** An admitted request, to refund under the limit it was admitted by. */
	record Admitted(RateLimit limit, long time, long cost) {
	}

	/**
	 * A limit, the same limit under another plan (as when an identity moves to another
	 * plan) and the requests sent to one of its buckets, starting at {@code start}.
	 */
	record Scenario(RateLimit limit, RateLimit otherPlan, long start, List<Step> steps) {
	}

}
