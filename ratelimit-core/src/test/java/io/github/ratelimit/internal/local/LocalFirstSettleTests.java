package io.github.ratelimit.internal.local;

import java.time.Duration;
import java.util.List;
import java.util.SplittableRandom;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.internal.core.ShareStore;
import io.github.ratelimit.internal.core.ThrottledLog;
import io.github.ratelimit.internal.memory.InMemoryRateLimitStore;
import io.github.ratelimit.store.Acquisition;
import io.github.ratelimit.store.RateLimit;
import io.github.ratelimit.store.RateLimitResult;
import io.github.ratelimit.store.contract.MutableClock;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Costs settled through a local-first store: against the share a reservation was taken
 * from where it can, by the shared store otherwise, and exactly either way: once the
 * shares are given back, the shared bucket holds the sum of the actual costs.
 */
class LocalFirstSettleTests {

	private static final Duration SYNC = Duration.ofMillis(10);

	private final MutableClock clock = new MutableClock();

	private final InMemoryRateLimitStore shared = new InMemoryRateLimitStore(this.clock, 10_000);

	private final LocalFirstRateLimitStore store = new LocalFirstRateLimitStore(this.shared,
			ShareStore.over(this.shared, this.clock), new LocalFirstSettings(this.clock, SYNC, (limit) -> false, 100,
					new ThrottledLog(0, System::nanoTime), (warning) -> {
					}));

	@AfterEach
	void closeStore() {
		this.store.close();
	}

	@Test
	void settlementsAgainstSharesChargeTheSharedBucketExactlyTheActualCosts() {
		RateLimit limit = RateLimit.of("tokens", Algorithm.FIXED_WINDOW, 10_000, Duration.ofHours(1));
		long used = settleRandomly(limit);
		// idle shares go back to the shared bucket
		for (int i = 0; i < 3; i++) {
			this.clock.advance(SYNC);
			this.store.sync().join();
		}
		assertThat(this.shared.inspect(limit, "tenant").remaining()).isEqualTo(limit.capacity() - used);
	}

	@Test
	void settlementsOfALimitWithoutSharesAreTheSharedStores() {
		RateLimit limit = RateLimit.of("tokens-exact", Algorithm.SLIDING_WINDOW_LOG, 10_000, Duration.ofHours(1));
		long used = settleRandomly(limit);
		assertThat(this.shared.inspect(limit, "tenant").remaining()).isEqualTo(limit.capacity() - used);
	}

	@Test
	void aChargeBeyondTheShareIsTheSharedStoresDebt() {
		RateLimit limit = RateLimit.of("tokens-debt", Algorithm.FIXED_WINDOW, 1_000, Duration.ofHours(1));
		List<Acquisition> one = List.of(new Acquisition(limit, "tenant", 1));
		for (int i = 0; i < 40; i++) {
			this.store.tryAcquire(one);
		}
		this.clock.advance(SYNC);
		this.store.sync().join();
		List<Acquisition> reserved = List.of(new Acquisition(limit, "tenant", 10));
		RateLimitResult decided = this.store.tryAcquire(reserved);
		assertThat(decided.store()).as("decided from the share").isEqualTo(RateLimitResult.LOCAL);
		this.store.settle(reserved, decided, new long[] { 1_500 });
		assertThat(this.shared.inspect(limit, "tenant").remaining()).isZero();
		// the share went into the charge: nothing is admitted here either
		assertThat(this.store.tryAcquire(one).allowed()).isFalse();
	}

	/** Reserves 10 units 200 times and settles each at a random cost; answers their sum. */
	private long settleRandomly(RateLimit limit) {
		SplittableRandom random = new SplittableRandom(42);
		List<Acquisition> reserved = List.of(new Acquisition(limit, "tenant", 10));
		long used = 0;
		int decidedHere = 0;
		for (int i = 0; i < 200; i++) {
			RateLimitResult decided = this.store.tryAcquire(reserved);
			assertThat(decided.allowed()).isTrue();
			decidedHere += decided.store().equals(RateLimitResult.LOCAL) ? 1 : 0;
			long actual = random.nextLong(31);
			this.store.settle(reserved, decided, new long[] { actual });
			used += actual;
			if (i % 20 == 19) {
				this.clock.advance(SYNC);
				this.store.sync().join();
			}
		}
		if (limit.algorithm() == Algorithm.FIXED_WINDOW) {
			assertThat(decidedHere).as("decided from a share").isPositive();
		}
		return used;
	}

}
