package io.github.ratelimit.internal.pipeline;

import java.time.Duration;
import java.util.List;

import org.junit.jupiter.api.Test;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.internal.core.RateLimiter;
import io.github.ratelimit.internal.memory.InMemoryRateLimitStore;
import io.github.ratelimit.store.Acquisition;
import io.github.ratelimit.store.MutableDecision;
import io.github.ratelimit.store.RateLimit;
import io.github.ratelimit.store.RateLimitDecision;
import io.github.ratelimit.store.RateLimitResult;
import io.github.ratelimit.store.contract.MutableClock;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The state of one request across its stages: the decisions the headers report, what a
 * later rejection gives back, and what a final status settles.
 */
class RequestLimitsTests {

	private final MutableClock clock = new MutableClock(MutableClock.DEFAULT_START_MICROS);

	private final RateLimiter limiter = new RateLimiter(new InMemoryRateLimitStore(this.clock, 1000));

	private final RateLimit route = RateLimit.of("GET /api/**", Algorithm.FIXED_WINDOW, 10, Duration.ofMinutes(1));

	private final RateLimit handler = RateLimit.of("orders", Algorithm.FIXED_WINDOW, 5, Duration.ofMinutes(1));

	@Test
	void aRequestOfOneStageReportsItsDecisions() {
		RequestLimits state = new RequestLimits();

		RateLimitResult result = decide(state, this.route);

		assertThat(state.decisions()).containsExactlyElementsOf(result.decisions());
		assertThat(state.decisions()).extracting(RateLimitDecision::remaining).containsExactly(9L);
	}

	@Test
	void aSecondStageAddsItsDecisionsAfterTheFirst() {
		RequestLimits state = new RequestLimits();
		RateLimitResult first = decide(state, this.route);

		decide(state, this.handler);

		assertThat(state.decisions()).extracting((decision) -> decision.limit().name())
			.containsExactly("GET /api/**", "orders");
		assertThat(first.decisions()).as("the first stage's own result").hasSize(1);
	}

	@Test
	void aLaterRejectionGivesBackWhatEarlierStagesConsumedAndSaysSoInTheDecisions() {
		RequestLimits state = new RequestLimits();
		RateLimitResult first = decide(state, this.route);
		decide(state, this.handler);

		state.refundAll(this.limiter);

		assertThat(state.decisions()).extracting(RateLimitDecision::remaining).containsExactly(10L, 5L);
		assertThat(first.decisions()).extracting(RateLimitDecision::remaining)
			.as("the store's result is left as it was")
			.containsExactly(9L);
		// the bucket has its unit back: the next request finds it full but for itself
		assertThat(remainingAfterANewRequest(this.route)).isEqualTo(9);
		// given back once
		state.refundAll(this.limiter);
		assertThat(remainingAfterANewRequest(this.route)).isEqualTo(8);
	}

	@Test
	void aClientGoneOnceTheRequestWentOnKeepsWhatItsStagesTook() {
		RequestLimits state = new RequestLimits();
		decide(state, this.route);
		assertThat(state.begin()).isTrue();
		decide(state, this.handler);

		// the handler stage never began: only its unit comes back
		state.abandon(this.limiter);

		assertThat(state.decisions()).extracting(RateLimitDecision::remaining).containsExactly(9L, 5L);
		assertThat(remainingAfterANewRequest(this.route)).isEqualTo(8);
		assertThat(remainingAfterANewRequest(this.handler)).isEqualTo(4);
		assertThat(state.begin()).as("nothing goes on for a client that went away").isFalse();
	}

	@Test
	void aClientGoneAfterTheOnlyStageGetsItsUnitBack() {
		RequestLimits state = new RequestLimits();
		RateLimitResult only = decide(state, this.route);

		state.abandon(this.limiter);

		assertThat(state.decisions()).extracting(RateLimitDecision::remaining).containsExactly(10L);
		assertThat(only.decisions()).extracting(RateLimitDecision::remaining)
			.as("the store's result is left as it was")
			.containsExactly(9L);
		assertThat(remainingAfterANewRequest(this.route)).isEqualTo(9);
	}

	@Test
	void aRejectionInTheOnlyStageConsumesNothingAndHasNothingToGiveBack() {
		RateLimit one = RateLimit.of("one", Algorithm.FIXED_WINDOW, 1, Duration.ofMinutes(1));
		decide(new RequestLimits(), one);
		RequestLimits state = new RequestLimits();

		RateLimitResult rejected = decide(state, one);
		state.refundAll(this.limiter);

		assertThat(rejected.allowed()).isFalse();
		assertThat(state.decisions()).containsExactlyElementsOf(rejected.decisions());
		assertThat(decide(new RequestLimits(), one).allowed()).as("nothing was given back").isFalse();
	}

	@Test
	void settlingGivesBackOnlyWhatLimitsNotCountingTheStatusConsumed() {
		RequestLimits state = new RequestLimits();
		List<Acquisition> routeStage = List.of(new Acquisition(this.route, "ip:203.0.113.7", 1));
		state.countOnly(routeStage, CountedStatuses.parse(List.of("4xx")));
		state.record(routeStage, this.limiter.acquire(routeStage));
		decide(state, this.handler);

		assertThat(state.countsByStatus()).isTrue();
		assertThat(state.settle(200, this.limiter)).isEqualTo(1);
		assertThat(state.settle(200, this.limiter)).as("settled once").isZero();

		RequestLimits next = new RequestLimits();
		decide(next, this.route);
		decide(next, this.handler);
		assertThat(next.decisions()).extracting(RateLimitDecision::remaining).containsExactly(9L, 3L);
	}

	@Test
	void aFirstStageKeptInPlaceReportsItsDecisionOnlyWhenAskedAndAsAValue() {
		RequestLimits state = new RequestLimits();
		assertThat(state.isEmpty()).isTrue();

		decideInPlace(state, this.route);

		assertThat(state.isEmpty()).isFalse();
		assertThat(state.keptInPlace()).isTrue();
		assertThat(state.decisions()).extracting(RateLimitDecision::remaining).containsExactly(9L);
		assertThat(state.keptInPlace()).as("a value once asked for").isFalse();
	}

	@Test
	void aSecondStageAfterOneKeptInPlaceAddsItsDecisionsAndALaterRejectionGivesBackBoth() {
		RequestLimits state = new RequestLimits();
		decideInPlace(state, this.route);
		decide(state, this.handler);

		assertThat(state.decisions()).extracting((decision) -> decision.limit().name())
			.containsExactly("GET /api/**", "orders");
		state.refundAll(this.limiter);

		assertThat(state.decisions()).extracting(RateLimitDecision::remaining).containsExactly(10L, 5L);
		assertThat(remainingAfterANewRequest(this.route)).isEqualTo(9);
		assertThat(remainingAfterANewRequest(this.handler)).isEqualTo(4);
	}

	@Test
	void aClientGoneOnceTheRequestWentOnKeepsWhatTheStageKeptInPlaceTook() {
		RequestLimits state = new RequestLimits();
		decideInPlace(state, this.route);
		assertThat(state.begin()).isTrue();
		decide(state, this.handler);

		state.abandon(this.limiter);

		assertThat(state.decisions()).extracting(RateLimitDecision::remaining).containsExactly(9L, 5L);
		assertThat(remainingAfterANewRequest(this.route)).isEqualTo(8);
	}

	@Test
	void aClientGoneBeforeTheStageKeptInPlaceBeganGetsItsUnitBack() {
		RequestLimits state = new RequestLimits();
		decideInPlace(state, this.route);

		state.abandon(this.limiter);

		assertThat(state.decisions()).extracting(RateLimitDecision::remaining).containsExactly(10L);
		assertThat(remainingAfterANewRequest(this.route)).isEqualTo(9);
		assertThat(state.countsByStatus()).isFalse();
	}

	/** A first stage as the route stage decides it in place. */
	private void decideInPlace(RequestLimits state, RateLimit limit) {
		MutableDecision decision = new MutableDecision();
		assertThat(this.limiter.acquire(limit, "ip:203.0.113.7", 1, 0, decision)).isTrue();
		state.recordSingle(decision, "ip:203.0.113.7", 1);
	}

	/** What a limit has left after one more request, decided alone. */
	private long remainingAfterANewRequest(RateLimit limit) {
		return decide(new RequestLimits(), limit).decisions().get(0).remaining();
	}

	private RateLimitResult decide(RequestLimits state, RateLimit limit) {
		List<Acquisition> acquisitions = List.of(new Acquisition(limit, "ip:203.0.113.7", 1));
		RateLimitResult result = this.limiter.acquire(acquisitions);
		state.record(acquisitions, result);
		return result;
	}

}
