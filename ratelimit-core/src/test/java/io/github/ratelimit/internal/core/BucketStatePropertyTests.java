package io.github.ratelimit.internal.core;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.Tuple;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.store.MutableDecision;
import io.github.ratelimit.store.RateLimit;
import io.github.ratelimit.store.RateLimitDecision;
import io.github.ratelimit.store.contract.MutableClock;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Invariants of every algorithm over random sequences of (time increment, cost), driven
 * the way a store drives a state: check, and commit only what was allowed.
 */
class BucketStatePropertyTests {

	private static final long START = MutableClock.DEFAULT_START_MICROS;

	@Property(tries = 200)
	void bucketsAdmitAtMostCapacityPlusOneUnitPerEmissionInterval(@ForAll("buckets") Scenario scenario) {
		List<Event> admitted = scenario.run().stream().filter(Event::allowed).toList();
		long interval = scenario.limit().emissionIntervalMicros();
		for (int i = 0; i < admitted.size(); i++) {
			long units = 0;
			for (int j = i; j < admitted.size(); j++) {
				units += admitted.get(j).cost();
				long length = admitted.get(j).time() - admitted.get(i).time();
				assertThat(units).as("units admitted in [%d, %d]", admitted.get(i).time(), admitted.get(j).time())
					.isLessThanOrEqualTo(scenario.limit().capacity() + length / interval);
			}
		}
	}

	@Property(tries = 200)
	void leakyBucketReleasesRequestsOneDrainSlotAfterAnother(@ForAll("leakyBuckets") Scenario scenario) {
		long interval = scenario.limit().emissionIntervalMicros();
		long queueDrainTime = scenario.limit().capacity() * interval;
		long previousSlotEnd = Long.MIN_VALUE;
		for (Event event : scenario.run()) {
			if (event.allowed()) {
				long slot = event.time() + event.decision().delayMicros();
				assertThat(slot).isGreaterThanOrEqualTo(previousSlotEnd);
				// a request never waits for more than the queue ahead of it
				assertThat(event.decision().delayMicros() + event.cost() * interval)
					.isLessThanOrEqualTo(queueDrainTime);
				previousSlotEnd = slot + event.cost() * interval;
			}
		}
	}

	@Property(tries = 200)
	void slidingWindowLogAdmitsAtMostCapacityInAnyPeriod(@ForAll("slidingWindowLogs") Scenario scenario) {
		List<Event> admitted = scenario.run().stream().filter(Event::allowed).toList();
		long period = scenario.limit().periodMicros();
		for (Event from : admitted) {
			long units = admitted.stream()
				.filter((event) -> event.time() >= from.time() && event.time() < from.time() + period)
				.mapToLong(Event::cost)
				.sum();
			assertThat(units).as("units admitted in [%d, %d)", from.time(), from.time() + period)
				.isLessThanOrEqualTo(scenario.limit().capacity());
		}
	}

	@Property(tries = 200)
	void fixedWindowAdmitsAtMostCapacityPerAlignedWindow(@ForAll("fixedWindows") Scenario scenario) {
		assertThat(unitsPerAlignedWindow(scenario).values())
			.allSatisfy((units) -> assertThat(units).isLessThanOrEqualTo(scenario.limit().capacity()));
	}

	@Property(tries = 200)
	void slidingWindowCounterAdmitsAtMostTwiceCapacityInAnyPeriod(
			@ForAll("slidingWindowCounters") Scenario scenario) {
		List<Event> events = scenario.run();
		List<Event> admitted = events.stream().filter(Event::allowed).toList();
		long period = scenario.limit().periodMicros();
		long capacity = scenario.limit().capacity();
		for (Event from : admitted) {
			long units = admitted.stream()
				.filter((event) -> event.time() >= from.time() && event.time() < from.time() + period)
				.mapToLong(Event::cost)
				.sum();
			assertThat(units).isLessThanOrEqualTo(2 * capacity);
		}
		long firstWindow = Math.floorDiv(events.get(0).time(), period);
		assertThat(unitsPerAlignedWindow(scenario).getOrDefault(firstWindow, 0L)).isLessThanOrEqualTo(capacity);
		assertThat(unitsPerAlignedWindow(scenario).values())
			.allSatisfy((units) -> assertThat(units).isLessThanOrEqualTo(capacity));
	}

	@Property(tries = 200)
	void slidingWindowCounterAdmitsOnlyWhenTheWeightedCountFits(@ForAll("slidingWindowCounters") Scenario scenario) {
		long period = scenario.limit().periodMicros();
		long capacity = scenario.limit().capacity();
		Map<Long, Long> units = new HashMap<>();
		for (Event event : scenario.run()) {
			long window = Math.floorDiv(event.time(), period);
			long elapsed = Math.floorMod(event.time(), period);
			long current = units.getOrDefault(window, 0L);
			long previous = units.getOrDefault(window - 1, 0L);
			// curr + prev·(1 − elapsed/P) + k ≤ C, in integers
			boolean fits = (current + event.cost()) * period + previous * (period - elapsed) <= capacity * period;
			assertThat(event.allowed()).as("decision at %d", event.time()).isEqualTo(fits);
			if (event.allowed()) {
				units.merge(window, event.cost(), Long::sum);
			}
		}
	}

	@Property(tries = 200)
	void remainingStaysWithinZeroAndCapacity(@ForAll("anyAlgorithm") Scenario scenario) {
		for (Event event : scenario.run()) {
			RateLimitDecision decision = event.decision();
			assertThat(decision.remaining()).isBetween(0L, scenario.limit().capacity());
			if (decision.allowed()) {
				assertThat(decision.remaining()).isLessThanOrEqualTo(scenario.limit().capacity() - event.cost());
				assertThat(decision.retryAfterMicros()).isZero();
			}
			else {
				assertThat(decision.remaining()).isLessThan(event.cost());
				assertThat(decision.retryAfterMicros()).isPositive();
				assertThat(decision.delayMicros()).isZero();
			}
		}
	}

	@Property(tries = 200)
	void rejectedRequestsChangeNothing(@ForAll("anyAlgorithm") Scenario scenario) {
		List<Event> events = scenario.run();
		// a state that never saw the rejected requests decides everything else the same way
		BucketState withoutRejections = BucketState.create(scenario.limit());
		for (Event event : events) {
			if (event.allowed()) {
				assertThat(Requests.acquire(withoutRejections, scenario.limit(), event.time(), event.cost()))
					.isEqualTo(event.decision());
			}
		}
	}

	@Property(tries = 200)
	void checkIsRepeatable(@ForAll("anyAlgorithm") Scenario scenario) {
		BucketState state = BucketState.create(scenario.limit());
		long now = scenario.start();
		for (Step step : scenario.steps()) {
			now += step.advanceMicros();
			RateLimitDecision first = state.check(scenario.limit(), now, step.cost());
			assertThat(state.check(scenario.limit(), now, step.cost())).isEqualTo(first);
			if (first.allowed()) {
				state.commit(scenario.limit(), now, step.cost());
			}
		}
	}

	@Property(tries = 200)
	void remainingResetAndRetryAfterAreExact(@ForAll("anyAlgorithm") Scenario scenario) {
		RateLimit limit = scenario.limit();
		List<Event> committed = new ArrayList<>();
		for (Event event : scenario.run()) {
			if (event.allowed()) {
				committed.add(event);
			}
			RateLimitDecision decision = event.decision();
			long now = event.time();
			long available = available(limit, committed, now);
			assertThat(decision.remaining()).as("remaining at %d", now).isEqualTo(available);
			if (decision.resetMicros() == 0) {
				assertThat(available).as("full at %d", now).isEqualTo(limit.capacity());
			}
			else {
				long reset = now + decision.resetMicros();
				assertThat(available(limit, committed, reset - 1)).as("available before reset").isEqualTo(available);
				assertThat(available(limit, committed, reset)).as("available at reset").isGreaterThan(available);
			}
			if (!decision.allowed()) {
				long retry = now + decision.retryAfterMicros();
				assertThat(replay(limit, committed).check(limit, retry - 1, event.cost()).allowed())
					.as("admitted just before retry-after").isFalse();
				assertThat(replay(limit, committed).check(limit, retry, event.cost()).allowed())
					.as("admitted at retry-after").isTrue();
			}
		}
	}

	@Property(tries = 200)
	void refundRestoresTheQuota(@ForAll("anyAlgorithm") Scenario scenario) {
		RateLimit limit = scenario.limit();
		List<Event> events = scenario.run();
		List<Event> committed = events.stream().filter(Event::allowed).toList();
		Event last = committed.get(committed.size() - 1);
		BucketState state = replay(limit, committed);
		state.refund(limit, last.time(), last.cost());
		BucketState withoutLast = replay(limit, committed.subList(0, committed.size() - 1));
		for (long cost = 1; cost <= limit.capacity(); cost++) {
			assertThat(state.check(limit, last.time(), cost)).isEqualTo(withoutLast.check(limit, last.time(), cost));
		}
	}

	@Property(tries = 200)
	void acquiringInPlaceDecidesAndRecordsAsCheckThenCommit(@ForAll("anyAlgorithm") Scenario scenario,
			@ForAll("maxDelays") long maxDelay) {
		RateLimit limit = scenario.limit();
		BucketState inPlace = BucketState.create(limit);
		BucketState checked = BucketState.create(limit);
		MutableDecision decision = new MutableDecision();
		MutableDecision probe = new MutableDecision();
		long now = scenario.start();
		for (Step step : scenario.steps()) {
			now += step.advanceMicros();
			RateLimitDecision expected = checked.check(limit, now, step.cost(), maxDelay);
			inPlace.check(limit, now, step.cost(), maxDelay, probe);
			assertThat(probe.toDecision()).as("checked in place at %d", now).isEqualTo(expected);
			inPlace.acquire(limit, now, step.cost(), maxDelay, decision);
			assertThat(decision.toDecision()).as("acquired in place at %d", now).isEqualTo(expected);
			if (expected.allowed()) {
				checked.commit(limit, now, step.cost());
			}
		}
		for (long cost = 1; cost <= limit.capacity(); cost++) {
			assertThat(inPlace.check(limit, now, cost)).isEqualTo(checked.check(limit, now, cost));
		}
	}

	@Provide
	Arbitrary<Long> maxDelays() {
		return Arbitraries.of(0L, 1L, 1_000L, 500_000L, 10_000_000L);
	}

	/** Units a request could take at {@code time}: what a cost-1 check reports. */
	private static long available(RateLimit limit, List<Event> committed, long time) {
		RateLimitDecision probe = replay(limit, committed).check(limit, time, 1);
		return probe.allowed() ? probe.remaining() + 1 : probe.remaining();
	}

	/** A fresh state that has admitted {@code committed}; checks may change a state's view of time. */
	private static BucketState replay(RateLimit limit, List<Event> committed) {
		BucketState state = BucketState.create(limit);
		for (Event event : committed) {
			assertThat(Requests.acquire(state, limit, event.time(), event.cost()).allowed()).isTrue();
		}
		return state;
	}

	private static Map<Long, Long> unitsPerAlignedWindow(Scenario scenario) {
		long period = scenario.limit().periodMicros();
		Map<Long, Long> units = new HashMap<>();
		for (Event event : scenario.run()) {
			if (event.allowed()) {
				units.merge(Math.floorDiv(event.time(), period), event.cost(), Long::sum);
			}
		}
		return units;
	}

	/**
	 * Every rate algorithm. A concurrency limit's quota comes back when calls end, not with
	 * time, so what these properties say of reset and retry-after does not apply to it; the
	 * store contract and the Redis differential tests pin its decisions.
	 */
	@Provide
	Arbitrary<Scenario> anyAlgorithm() {
		return scenarios(Arrays.stream(Algorithm.values())
			.filter((algorithm) -> !AlgorithmSpec.of(algorithm).heldInFlight())
			.toArray(Algorithm[]::new));
	}

	@Provide
	Arbitrary<Scenario> buckets() {
		return scenarios(Algorithm.TOKEN_BUCKET, Algorithm.LEAKY_BUCKET);
	}

	@Provide
	Arbitrary<Scenario> leakyBuckets() {
		return scenarios(Algorithm.LEAKY_BUCKET);
	}

	@Provide
	Arbitrary<Scenario> fixedWindows() {
		return scenarios(Algorithm.FIXED_WINDOW);
	}

	@Provide
	Arbitrary<Scenario> slidingWindowLogs() {
		return scenarios(Algorithm.SLIDING_WINDOW_LOG);
	}

	@Provide
	Arbitrary<Scenario> slidingWindowCounters() {
		return scenarios(Algorithm.SLIDING_WINDOW_COUNTER);
	}

	private static Arbitrary<Scenario> scenarios(Algorithm... algorithms) {
		Arbitrary<RateLimit> limits = Combinators
			.combine(Arbitraries.of(algorithms), Arbitraries.longs().between(1, 8), Arbitraries.longs().between(1, 8),
					Arbitraries.of(1L, 2L, 3L, 7L, 10L, 1_000L, 1_001L))
			.as((algorithm, capacity, refill, periodMillis) -> new RateLimit("property", algorithm, capacity, refill,
					Duration.ofMillis(periodMillis)));
		return limits.flatMap((limit) -> Combinators
			.combine(Arbitraries.longs().between(0, limit.periodMicros() - 1),
					steps(limit).list().ofMinSize(1).ofMaxSize(40))
			.as((offset, steps) -> new Scenario(limit, START + offset, steps)));
	}

	private static Arbitrary<Step> steps(RateLimit limit) {
		long period = limit.periodMicros();
		long interval = limit.emissionIntervalMicros();
		Arbitrary<Long> advances = Arbitraries.frequencyOf(
				Tuple.of(4, Arbitraries.just(0L)),
				Tuple.of(3, Arbitraries.longs().between(1, Math.max(1, interval))),
				Tuple.of(3, Arbitraries.longs().between(1, Math.max(1, period / 4))),
				Tuple.of(2, Arbitraries.longs().between(period / 4, 2 * period)),
				Tuple.of(1, Arbitraries.of(period, interval, period - 1, interval - 1)));
		Arbitrary<Long> costs = Arbitraries.frequencyOf(
				Tuple.of(3, Arbitraries.just(1L)),
				Tuple.of(1, Arbitraries.longs().between(1, limit.capacity())));
		return Combinators.combine(advances, costs).as(Step::new);
	}

	/** One request: how long after the previous one it comes, and what it costs. */
	record Step(long advanceMicros, long cost) {
	}

	/** A decided request. */
	record Event(long time, long cost, RateLimitDecision decision) {

		boolean allowed() {
			return this.decision.allowed();
		}

	}

	/** A limit and the requests sent to one of its buckets, starting at {@code start}. */
	record Scenario(RateLimit limit, long start, List<Step> steps) {

		List<Event> run() {
			BucketState state = BucketState.create(this.limit);
			List<Event> events = new ArrayList<>();
			long now = this.start;
			for (Step step : this.steps) {
				now += step.advanceMicros();
				events.add(new Event(now, step.cost(), Requests.acquire(state, this.limit, now, step.cost())));
			}
			return events;
		}

	}

}
