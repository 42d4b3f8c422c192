package io.github.ratelimit.internal.core;

import java.time.Duration;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.FailMode;
import io.github.ratelimit.KeySource;
import io.github.ratelimit.store.Acquisition;
import io.github.ratelimit.store.RateLimit;
import io.github.ratelimit.store.RateLimitDecision;
import io.github.ratelimit.store.RateLimitResult;
import io.github.ratelimit.store.RateLimitStore;
import io.github.ratelimit.store.contract.MutableClock;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What every {@link RateLimitStore} does when the plan of an identity changes: the bucket
 * belongs to the identity, not to the plan, so the new plan's limit applies at once to
 * the existing state, keeping what was consumed, and no second bucket appears. A store
 * test extends this class.
 */
public abstract class PlanChangeContractTest {

	/** Start of a window: aligned to whole seconds and minutes. */
	protected static final long T0 = MutableClock.DEFAULT_START_MICROS;

	private static final String USER = "user:alice";

	private final MutableClock clock = new MutableClock(T0);

	private RateLimitStore store;

	/**
	 * Creates the store under test, deciding at the time of {@code clock}.
	 * @param clock the clock the store must read the time from
	 * @return a new, empty store
	 */
	protected abstract RateLimitStore createStore(MutableClock clock);

	/**
	 * Number of buckets the store holds, however many keys each needs.
	 * @return the bucket count
	 */
	protected abstract long bucketCount();

	@BeforeEach
	void setUpStore() {
		this.store = createStore(this.clock);
	}

	/**
	 * The clock the store was created with.
	 * @return the clock
	 */
	protected MutableClock clock() {
		return this.clock;
	}

	/**
	 * The store under test.
	 * @return the store
	 */
	protected RateLimitStore store() {
		return this.store;
	}

	@Test
	void tokenBucketUpgradedMidStreamKeepsWhatWasConsumed() {
		// free: 100 per minute; pro: 1,000 per minute, so tokens come ten times as fast
		LimitDefinition api = api(Algorithm.TOKEN_BUCKET, 100, Duration.ofMinutes(1), 1_000, null);
		for (int i = 1; i <= 60; i++) {
			assertThat(acquire(api, null).remaining()).isEqualTo(100 - i);
		}
		RateLimitDecision upgraded = acquire(api, "pro");
		assertThat(upgraded.allowed()).isTrue();
		assertThat(upgraded.limit().capacity()).isEqualTo(1_000);
		// 61 of 1,000 used: not refilled to 1,000, not 600 from re-reading the debt as time
		assertThat(upgraded.remaining()).isEqualTo(939);
		RateLimitDecision downgraded = acquire(api, null);
		assertThat(downgraded.limit().capacity()).isEqualTo(100);
		assertThat(downgraded.remaining()).isEqualTo(38);
		assertThat(bucketCount()).isEqualTo(1);
	}

	@Test
	void tokenBucketRefillsAtThePlansRateAfterAnUpgrade() {
		LimitDefinition api = api(Algorithm.TOKEN_BUCKET, 100, Duration.ofMinutes(1), 1_000, null);
		for (int i = 0; i < 100; i++) {
			assertThat(acquire(api, null).allowed()).isTrue();
		}
		RateLimitDecision exhausted = acquire(api, null);
		assertThat(exhausted.allowed()).isFalse();
		assertThat(exhausted.retryAfterMicros()).isEqualTo(600_000);
		for (int i = 1; i <= 900; i++) {
			assertThat(acquire(api, "pro").remaining()).isEqualTo(900 - i);
		}
		// the pro bucket refills one token every 60ms, not every 600ms
		RateLimitDecision empty = acquire(api, "pro");
		assertThat(empty.allowed()).isFalse();
		assertThat(empty.retryAfterMicros()).isEqualTo(60_000);
		this.clock.advanceMicros(60_000);
		assertThat(acquire(api, "pro").allowed()).isTrue();
	}

	@ParameterizedTest
	@EnumSource(Algorithm.class)
	void upgradeRaisesTheLimitAtOnceWithoutResettingTheBucket(Algorithm algorithm) {
		LimitDefinition api = api(algorithm, 10, Duration.ofSeconds(1), 100, null);
		for (int i = 1; i <= 6; i++) {
			assertThat(acquire(api, null).remaining()).isEqualTo(10 - i);
		}
		RateLimitDecision upgraded = acquire(api, "pro");
		assertThat(upgraded.allowed()).isTrue();
		assertThat(upgraded.limit().capacity()).isEqualTo(100);
		assertThat(upgraded.remaining()).isEqualTo(93);
		RateLimitDecision downgraded = acquire(api, null);
		assertThat(downgraded.allowed()).isTrue();
		assertThat(downgraded.remaining()).isEqualTo(2);
		assertThat(bucketCount()).isEqualTo(1);
	}

	@ParameterizedTest
	@EnumSource(Algorithm.class)
	void downgradeBelowWhatWasUsedRejectsUntilTheBucketHasDrained(Algorithm algorithm) {
		LimitDefinition api = api(algorithm, 10, Duration.ofSeconds(1), 100, null);
		for (int i = 1; i <= 50; i++) {
			assertThat(acquire(api, "pro").remaining()).isEqualTo(100 - i);
		}
		RateLimitDecision downgraded = acquire(api, null);
		assertThat(downgraded.allowed()).isFalse();
		assertThat(downgraded.limit().capacity()).isEqualTo(10);
		assertThat(downgraded.remaining()).isZero();
		this.clock.advanceMicros(downgraded.retryAfterMicros());
		assertThat(acquire(api, null).allowed()).isTrue();
		assertThat(bucketCount()).isEqualTo(1);
	}

	@Test
	void planTheDefinitionDoesNotKnowGetsThePolicysOwnLimit() {
		LimitDefinition api = api(Algorithm.FIXED_WINDOW, 10, Duration.ofMinutes(1), 100, null);
		assertThat(acquire(api, "gold").limit()).isEqualTo(api.limit());
		assertThat(acquire(api, "PRO").limit().capacity()).isEqualTo(100);
		assertThat(acquire(api, "pro").remaining()).isEqualTo(97);
	}

	@Test
	void refundAfterAnUpgradeGivesBackTheTokensTaken() {
		LimitDefinition api = api(Algorithm.TOKEN_BUCKET, 100, Duration.ofMinutes(1), 1_000, null);
		for (int i = 0; i < 60; i++) {
			acquire(api, null);
		}
		List<Acquisition> pro = api.acquisitions(USER, "pro");
		RateLimitResult admitted = this.store.tryAcquire(pro);
		assertThat(admitted.decisions().get(0).remaining()).isEqualTo(939);
		this.store.refund(pro, admitted);
		assertThat(acquire(api, "pro").remaining()).isEqualTo(939);
	}

	private RateLimitDecision acquire(LimitDefinition definition, String plan) {
		RateLimitResult result = this.store.tryAcquire(definition.acquisitions(USER, plan));
		return result.decisions().get(0);
	}

	/** A policy "api" of {@code capacity} per period, with a plan "pro" of another capacity. */
	private static LimitDefinition api(Algorithm algorithm, long capacity, Duration period, long proCapacity,
			Long proRefill) {
		RateLimit free = new RateLimit("api", algorithm, capacity, 0, period, FailMode.OPEN, false);
		RateLimit pro = new RateLimit("api", algorithm, proCapacity, (proRefill != null) ? proRefill : 0, period,
				FailMode.OPEN, false);
		return LimitDefinition.builder(free).key(List.of(KeySource.PRINCIPAL)).plans(Map.of("pro", pro)).build();
	}

}
