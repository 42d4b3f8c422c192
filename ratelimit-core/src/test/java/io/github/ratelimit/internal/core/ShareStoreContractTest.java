package io.github.ratelimit.internal.core;

import java.time.Duration;
import java.util.List;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.store.Acquisition;
import io.github.ratelimit.store.RateLimit;
import io.github.ratelimit.store.RateLimitDecision;
import io.github.ratelimit.store.RateLimitResult;
import io.github.ratelimit.store.RateLimitStore;
import io.github.ratelimit.store.contract.MutableClock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/**
 * What every {@link ShareStore} must do: take the costs all or nothing, and beyond them
 * at most what the bucket has left, in every shareable algorithm.
 */
public abstract class ShareStoreContractTest {

	/** Start of a window: aligned to whole seconds and minutes. */
	protected static final long T0 = MutableClock.DEFAULT_START_MICROS;

	private final MutableClock clock = new MutableClock(T0);

	private RateLimitStore store;

	private ShareStore sharing;

	/**
	 * Creates the store under test, deciding at the time of {@code clock}.
	 * @param clock the clock
	 * @return a new, empty store that is also a {@link ShareStore}, or whose sharing view
	 * {@link #sharing(RateLimitStore)} gives
	 */
	protected abstract RateLimitStore createStore(MutableClock clock);

	/**
	 * The sharing view of the store under test.
	 * @param store the store
	 * @return the view
	 */
	protected ShareStore sharing(RateLimitStore store) {
		return (ShareStore) store;
	}

	/**
	 * The clock the store was created with.
	 * @return the clock
	 */
	protected MutableClock clock() {
		return this.clock;
	}

	@BeforeEach
	void setUpStore() {
		this.store = createStore(this.clock);
		this.sharing = sharing(this.store);
	}

	@Test
	void leaseTakesTheCostAndAtMostWhatIsLeftBeyondIt() {
		RateLimit limit = RateLimit.of("lease-tb", Algorithm.TOKEN_BUCKET, 10, Duration.ofSeconds(10));
		ShareGrant first = lease(limit, 1, 4);
		assertThat(first.result().allowed()).isTrue();
		assertThat(first.extra()).containsExactly(4);
		assertThat(first.result().decisions().get(0).remaining()).isEqualTo(5);
		ShareGrant second = lease(limit, 1, 100);
		assertThat(second.result().allowed()).isTrue();
		assertThat(second.extra()).containsExactly(4);
		assertThat(second.result().decisions().get(0).remaining()).isZero();
		ShareGrant third = lease(limit, 1, 3);
		assertThat(third.result().allowed()).isFalse();
		assertThat(third.extra()).containsExactly(0);
		assertThat(this.store.tryAcquire(List.of(new Acquisition(limit, "a", 1))).allowed()).isFalse();
	}

	@Test
	void leaseWithoutCostOnlyTakesWhatIsLeft() {
		RateLimit limit = RateLimit.of("lease-refresh", Algorithm.TOKEN_BUCKET, 6, Duration.ofSeconds(6));
		assertThat(lease(limit, 0, 4).extra()).containsExactly(4);
		ShareGrant rest = lease(limit, 0, 4);
		assertThat(rest.result().allowed()).isTrue();
		assertThat(rest.extra()).containsExactly(2);
		assertThat(lease(limit, 0, 4).extra()).containsExactly(0);
		// one token a second comes back
		this.clock.advance(Duration.ofSeconds(1));
		assertThat(lease(limit, 0, 4).extra()).containsExactly(1);
	}

	@Test
	void leasedUnitsGivenBackAreAvailableAgain() {
		RateLimit limit = RateLimit.of("lease-back", Algorithm.TOKEN_BUCKET, 10, Duration.ofHours(1));
		ShareGrant leased = lease(limit, 0, 10);
		assertThat(leased.extra()).containsExactly(10);
		assertThat(this.store.tryAcquire(List.of(new Acquisition(limit, "a", 1))).allowed()).isFalse();
		this.store.refund(List.of(new Acquisition(limit, "a", 7)), leased.result());
		RateLimitResult after = this.store.tryAcquire(List.of(new Acquisition(limit, "a", 7)));
		assertThat(after.allowed()).isTrue();
		assertThat(after.decisions().get(0).remaining()).isZero();
	}

	@Test
	void fixedWindowLeasesOnlyWhatItsWindowHasLeft() {
		RateLimit limit = RateLimit.of("lease-fw", Algorithm.FIXED_WINDOW, 5, Duration.ofSeconds(1));
		ShareGrant leased = lease(limit, 2, 10);
		assertThat(leased.extra()).containsExactly(3);
		assertThat(lease(limit, 1, 1).result().allowed()).isFalse();
		this.clock.advance(Duration.ofSeconds(1));
		assertThat(lease(limit, 0, 10).extra()).containsExactly(5);
	}

	@Test
	void slidingWindowCounterLeasesOnlyWhatItsWindowsHaveLeft() {
		RateLimit limit = RateLimit.of("lease-swc", Algorithm.SLIDING_WINDOW_COUNTER, 8, Duration.ofSeconds(1));
		assertThat(lease(limit, 1, 20).extra()).containsExactly(7);
		this.clock.advance(Duration.ofMillis(1_500));
		// half of the previous window's 8 still weighs
		assertThat(lease(limit, 0, 20).extra()).containsExactly(4);
	}

	@Test
	void costsAreAllOrNothingAndNothingIsLeasedWhenOneRejects() {
		RateLimit roomy = RateLimit.of("lease-roomy", Algorithm.TOKEN_BUCKET, 10, Duration.ofHours(1));
		RateLimit tight = RateLimit.of("lease-tight", Algorithm.FIXED_WINDOW, 1, Duration.ofHours(1));
		assertThat(this.store.tryAcquire(List.of(new Acquisition(tight, "a", 1))).allowed()).isTrue();
		ShareGrant both = this.sharing
			.grant(List.of(new ShareRequest(roomy, "a", 1, 5), new ShareRequest(tight, "a", 1, 5)));
		assertThat(both.result().allowed()).isFalse();
		assertThat(both.extra()).containsExactly(0, 0);
		RateLimitResult whole = this.store.tryAcquire(List.of(new Acquisition(roomy, "a", 10)));
		assertThat(whole.allowed()).isTrue();
	}

	@Test
	void eachLimitOfALeaseTakesItsOwnExtra() {
		RateLimit bucket = RateLimit.of("lease-many-tb", Algorithm.TOKEN_BUCKET, 10, Duration.ofHours(1));
		RateLimit window = RateLimit.of("lease-many-fw", Algorithm.FIXED_WINDOW, 6, Duration.ofHours(1));
		RateLimit counter = RateLimit.of("lease-many-swc", Algorithm.SLIDING_WINDOW_COUNTER, 4, Duration.ofHours(1));
		ShareGrant leased = this.sharing.grant(List.of(new ShareRequest(bucket, "a", 2, 3), new ShareRequest(window, "b", 0, 9),
				new ShareRequest(counter, "a", 1, 1)));
		assertThat(leased.result().allowed()).isTrue();
		assertThat(leased.extra()).containsExactly(3, 6, 1);
		assertThat(leased.result().decisions()).extracting(RateLimitDecision::remaining).containsExactly(5L, 0L, 2L);
		assertThat(this.store.tryAcquire(List.of(new Acquisition(bucket, "a", 5))).allowed()).isTrue();
		assertThat(this.store.tryAcquire(List.of(new Acquisition(window, "b", 1))).allowed()).isFalse();
		assertThat(this.store.tryAcquire(List.of(new Acquisition(counter, "a", 2))).allowed()).isTrue();
	}

	@Test
	void refusesLimitsWhoseUnitsCannotBeSpentLater() {
		for (Algorithm algorithm : List.of(Algorithm.LEAKY_BUCKET, Algorithm.SLIDING_WINDOW_LOG,
				Algorithm.CONCURRENCY)) {
			RateLimit limit = RateLimit.of("lease-" + algorithm, algorithm, 5, Duration.ofSeconds(1));
			assertThatIllegalArgumentException().isThrownBy(() -> new ShareRequest(limit, "a", 1, 1))
				.withMessageContaining("cannot be shared");
		}
	}

	private ShareGrant lease(RateLimit limit, long cost, long extra) {
		return this.sharing.grant(List.of(new ShareRequest(limit, "a", cost, extra)));
	}

}
