package io.github.ratelimit.internal.core;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.internal.memory.InMemoryRateLimitStore;
import io.github.ratelimit.store.Acquisition;
import io.github.ratelimit.store.MutableDecision;
import io.github.ratelimit.store.RateLimit;
import io.github.ratelimit.store.RateLimitDecision;
import io.github.ratelimit.store.RateLimitObserver;
import io.github.ratelimit.store.RateLimitResult;
import io.github.ratelimit.store.contract.MutableClock;

import static org.assertj.core.api.Assertions.assertThat;

class RateLimiterTest {

	private final MutableClock clock = new MutableClock(MutableClock.DEFAULT_START_MICROS);

	private final RateLimiter limiter = new RateLimiter(new InMemoryRateLimitStore(this.clock, 100));

	private final RateLimit shared = RateLimit.of("shared", Algorithm.FIXED_WINDOW, 10, Duration.ofMinutes(1));

	@Test
	void placesSharingABucketPayTheSumOfTheirCostsAtomically() {
		RateLimitResult result = this.limiter
			.acquire(List.of(new Acquisition(this.shared, "u", 3), new Acquisition(this.shared, "u", 4)));
		assertThat(result.allowed()).isTrue();
		assertThat(result.decisions()).extracting(RateLimitDecision::remaining).containsExactly(3L, 3L);
	}

	@Test
	void costsAddingUpAboveTheCapacityAskForTheWholeBucketInsteadOfFailing() {
		List<Acquisition> request = List.of(new Acquisition(this.shared, "u", 6), new Acquisition(this.shared, "u", 6));
		assertThat(this.limiter.acquire(request).allowed()).isTrue();
		assertThat(this.limiter.acquire(request).allowed()).isFalse();
	}

	@Test
	void decidesOneLimitInPlaceAsTheListDoesAndTellsTheObserver() {
		List<RateLimitResult> observed = new ArrayList<>();
		RateLimiter observedLimiter = new RateLimiter(new InMemoryRateLimitStore(this.clock, 100),
				new RateLimitObserver() {

					@Override
					public void decided(RateLimitResult result, long nanos) {
						observed.add(result);
					}

				});
		RateLimit limit = RateLimit.of("orders", Algorithm.TOKEN_BUCKET, 2, Duration.ofMinutes(1));
		MutableDecision decision = new MutableDecision();
		for (int i = 0; i < 3; i++) {
			boolean admitted = observedLimiter.acquire(limit, "alice", 1, 0, decision);
			RateLimitResult listed = this.limiter.acquire(List.of(new Acquisition(limit, "alice", 1)));
			assertThat(admitted).isEqualTo(listed.allowed()).isEqualTo(i < 2);
			assertThat(decision.toResult()).isEqualTo(listed);
			assertThat(observed.get(i)).isEqualTo(listed);
		}
	}

	@Test
	void decidesInPlaceThroughAStoreThatOnlyDecidesLists() {
		RecordingStore listsOnly = new RecordingStore(new InMemoryRateLimitStore(this.clock, 100));
		RateLimiter recorded = new RateLimiter(listsOnly);
		RateLimit shadow = new RateLimit("candidate", Algorithm.FIXED_WINDOW, 1, 0, Duration.ofMinutes(1),
				io.github.ratelimit.FailMode.OPEN, true);
		MutableDecision decision = new MutableDecision();
		assertThat(recorded.acquire(shadow, "alice", 1, 0, decision)).isTrue();
		assertThat(decision.allowed()).isTrue();
		assertThat(recorded.acquire(shadow, "alice", 1, 0, decision)).as("a shadow limit never stops a request")
			.isTrue();
		assertThat(decision.allowed()).isFalse();
		assertThat(decision.rejects()).isFalse();
		assertThat(decision.retryAfterMicros()).isPositive();
		assertThat(decision.store()).isEqualTo(RateLimitResult.MEMORY);
		assertThat(decision.timestampMicros()).isEqualTo(this.clock.nowMicros());
		assertThat(listsOnly.delaysInDecisionOrder()).hasSize(2);
	}

	@Test
	void refundGivesBackTheMergedCost() {
		List<Acquisition> request = List.of(new Acquisition(this.shared, "u", 3), new Acquisition(this.shared, "u", 4));
		RateLimitResult result = this.limiter.acquire(request);
		this.limiter.refund(request, result);
		assertThat(this.limiter.acquire(List.of(new Acquisition(this.shared, "u", 10))).allowed()).isTrue();
	}


	@Test
	void decidesOnTheCallingThreadOnlyWithAStoreKeepingTheDefaultAsynchronousCall() {
		InMemoryRateLimitStore memory = new InMemoryRateLimitStore(new MutableClock(MutableClock.DEFAULT_START_MICROS),
				100);
		assertThat(new RateLimiter(memory).decidesOnCallingThread()).isTrue();
		// a decorator that may go to another thread when asked without blocking
		assertThat(new RateLimiter(new ObservedRateLimitStore(memory, RateLimitObserver.NONE)).decidesOnCallingThread())
			.isFalse();
	}

}
