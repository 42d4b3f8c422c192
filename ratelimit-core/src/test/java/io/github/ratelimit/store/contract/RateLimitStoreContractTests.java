package io.github.ratelimit.store.contract;

import java.time.Duration;
import java.time.LocalDateTime;
import java.time.ZoneId;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.CalendarPeriod;
import io.github.ratelimit.FailMode;
import io.github.ratelimit.store.Acquisition;
import io.github.ratelimit.store.BucketSnapshot;
import io.github.ratelimit.store.RateLimit;
import io.github.ratelimit.store.RateLimitDecision;
import io.github.ratelimit.store.RateLimitResult;
import io.github.ratelimit.store.RateLimitStore;
import io.github.ratelimit.store.RateLimitStores;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/**
 * Decisions every {@link RateLimitStore} makes for the same inputs: every algorithm and
 * its boundaries, several limits in one request, refunds, costs settled after the call
 * (given back, or charged into debt), concurrency leases, calendar
 * quotas across daylight-saving days, concurrent callers decided exactly, expiry of idle
 * state, and failover while the store fails. The memory and Redis stores run it, and so
 * does an application's own store.
 * <p>
 * A store test extends this class and builds its store on the given clock: the store
 * decides at the clock's time, which only the tests move. A store built on an
 * {@link io.github.ratelimit.store.AtomicStateStorage} extends
 * {@link AtomicStateStorageContractTests} instead, which needs only the storage.
 * <p>
 * The suite is in ratelimit-core's test-jar; a test needs it with JUnit Jupiter and
 * AssertJ (the test-jar brings neither):
 * <pre>{@code
 * <dependency>
 *   <groupId>io.github.ratelimit</groupId>
 *   <artifactId>ratelimit-core</artifactId>
 *   <version>${ratelimit.version}</version>
 *   <type>test-jar</type>
 *   <scope>test</scope>
 * </dependency>
 * }</pre>
 * (with Gradle, {@code testImplementation("io.github.ratelimit:ratelimit-core:VERSION:tests")}),
 * and then:
 * <pre class="code">
 * class MyStoreContractTests extends RateLimitStoreContractTests {
 *
 * 	&#64;Override
 * 	protected RateLimitStore createStore(MutableClock clock) {
 * 		return new MyStore(clock::nowMicros);
 * 	}
 *
 * }
 * </pre>
 * A store that a test can make fail, by stopping its server or breaking its connection,
 * overrides {@link #failStore()} and {@link #recoverStore()}; the failover test is skipped
 * otherwise.
 */
public abstract class RateLimitStoreContractTests {

	/** Start of a window: aligned to whole seconds and minutes. */
	protected static final long T0 = MutableClock.DEFAULT_START_MICROS;

	private static final long SECOND = 1_000_000;

	private static final long HOUR = 3_600 * SECOND;

	private static final ZoneId BERLIN = ZoneId.of("Europe/Berlin");

	/** Threads deciding on one bucket at once. */
	private static final int CALLERS = 8;

	/** Requests each of them sends: together twice the capacity, enough for them to overlap. */
	private static final int ATTEMPTS_PER_CALLER = 100;

	private static final int HOT_CAPACITY = CALLERS * ATTEMPTS_PER_CALLER / 2;

	/** Reservations each caller settles at a random actual cost. */
	private static final int SETTLES_PER_CALLER = 50;

	/** Cost reserved before each call whose actual cost is settled afterwards. */
	private static final long SETTLE_ESTIMATE = 10;

	/** Longest wait for a recovered store to decide again: a reconnect, a few probes. */
	private static final Duration RECOVERY_WAIT = Duration.ofSeconds(30);

	private final MutableClock clock = new MutableClock(T0);

	private RateLimitStore store;

	/**
	 * Creates the store under test, deciding at the time of {@code clock}.
	 * @param clock the clock the store must read the time from
	 * @return a new, empty store
	 */
	protected abstract RateLimitStore createStore(MutableClock clock);

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

	/**
	 * Makes the store fail until {@link #recoverStore()}: its calls throw or time out, as
	 * when its server is down or its connection is broken. A store that a test cannot make
	 * fail keeps this default, which skips the failover test.
	 */
	protected void failStore() {
		Assumptions.abort("the store cannot be made to fail: override failStore() and recoverStore() to run this");
	}

	/**
	 * Makes the store answer again after {@link #failStore()}; it may start empty. Called
	 * whenever {@link #failStore()} returned, so that the next test finds a working store.
	 */
	protected void recoverStore() {
		Assumptions.abort("the store cannot be made to recover: override failStore() and recoverStore()");
	}

	@Test
	void tokenBucketStartsFullAndRefillsOneTokenPerInterval() {
		// 4 tokens, one every 500ms
		RateLimit limit = new RateLimit("tb", Algorithm.TOKEN_BUCKET, 4, 2, Duration.ofSeconds(1));
		expect(acquire(limit, 1), true, 3, 0, 500_000);
		expect(acquire(limit, 2), true, 1, 0, 500_000);
		expect(acquire(limit, 2), false, 1, 500_000, 500_000);
		expect(acquire(limit, 1), true, 0, 0, 500_000);
		expect(acquire(limit, 1), false, 0, 500_000, 500_000);
		at(T0 + 499_999);
		expect(acquire(limit, 1), false, 0, 1, 1);
		at(T0 + 500_000);
		expect(acquire(limit, 1), true, 0, 0, 500_000);
		at(T0 + 1_250_000);
		expect(acquire(limit, 1), true, 0, 0, 250_000);
		expect(acquire(limit, 3), false, 0, 1_250_000, 250_000);
		at(T0 + 60 * SECOND);
		expect(acquire(limit, 4), true, 0, 0, 500_000);
	}

	@Test
	void leakyBucketDelaysAdmittedRequestsToTheirDrainSlots() {
		// a queue of 3 drained every 100ms
		RateLimit limit = new RateLimit("lb", Algorithm.LEAKY_BUCKET, 3, 10, Duration.ofSeconds(1));
		RateLimitResult first = acquireAll(new Acquisition(limit, "alice", 1));
		assertThat(first.delayMicros()).isZero();
		assertThat(acquireAll(new Acquisition(limit, "alice", 1)).delayMicros()).isEqualTo(100_000);
		RateLimitResult third = acquireAll(new Acquisition(limit, "alice", 1));
		assertThat(third.delayMicros()).isEqualTo(200_000);
		expect(third.decisions().get(0), true, 0, 0, 100_000);
		assertThat(third.decisions().get(0).delayMicros()).isEqualTo(200_000);
		RateLimitDecision rejected = acquire(limit, 1);
		expect(rejected, false, 0, 100_000, 100_000);
		assertThat(rejected.delayMicros()).isZero();
		at(T0 + 150_000);
		RateLimitDecision later = acquire(limit, 1);
		expect(later, true, 0, 0, 50_000);
		assertThat(later.delayMicros()).isEqualTo(150_000);
		at(T0 + 10 * SECOND);
		assertThat(acquire(limit, 2).delayMicros()).isZero();
	}

	@Test
	void fixedWindowCountsPerEpochAlignedWindow() {
		RateLimit limit = RateLimit.of("fw", Algorithm.FIXED_WINDOW, 3, Duration.ofSeconds(1));
		at(T0 + 400_000);
		expect(acquire(limit, 2), true, 1, 0, 600_000);
		expect(acquire(limit, 2), false, 1, 600_000, 600_000);
		expect(acquire(limit, 1), true, 0, 0, 600_000);
		at(T0 + 999_999);
		expect(acquire(limit, 1), false, 0, 1, 1);
		at(T0 + SECOND);
		expect(acquire(limit, 3), true, 0, 0, SECOND);
		at(T0 + 3 * SECOND + 250_000);
		expect(acquire(limit, 1), true, 2, 0, 750_000);
	}

	@Test
	void fixedWindowAdmitsABurstOnEitherSideOfABoundary() {
		RateLimit limit = RateLimit.of("fw", Algorithm.FIXED_WINDOW, 3, Duration.ofSeconds(1));
		at(T0 + SECOND - 1);
		assertThat(acquire(limit, 3).allowed()).isTrue();
		at(T0 + SECOND);
		assertThat(acquire(limit, 3).allowed()).isTrue();
	}

	@Test
	void slidingWindowLogCountsTheLastPeriodExactly() {
		RateLimit limit = RateLimit.of("swl", Algorithm.SLIDING_WINDOW_LOG, 3, Duration.ofSeconds(1));
		expect(acquire(limit, 1), true, 2, 0, SECOND);
		at(T0 + 100_000);
		expect(acquire(limit, 2), true, 0, 0, 900_000);
		at(T0 + 200_000);
		expect(acquire(limit, 1), false, 0, 800_000, 800_000);
		expect(acquire(limit, 2), false, 0, 900_000, 800_000);
		at(T0 + SECOND);
		expect(acquire(limit, 1), true, 0, 0, 100_000);
		at(T0 + SECOND + 99_999);
		expect(acquire(limit, 1), false, 0, 1, 1);
		at(T0 + SECOND + 100_000);
		expect(acquire(limit, 2), true, 0, 0, 900_000);
	}

	@Test
	void slidingWindowLogRejectsABurstOnEitherSideOfABoundary() {
		RateLimit limit = RateLimit.of("swl", Algorithm.SLIDING_WINDOW_LOG, 3, Duration.ofSeconds(1));
		at(T0 + SECOND - 1);
		assertThat(acquire(limit, 3).allowed()).isTrue();
		at(T0 + SECOND);
		expect(acquire(limit, 3), false, 0, SECOND - 1, SECOND - 1);
	}

	@Test
	void slidingWindowCounterWeighsThePreviousWindow() {
		RateLimit limit = RateLimit.of("swc", Algorithm.SLIDING_WINDOW_COUNTER, 10, Duration.ofSeconds(1));
		expect(acquire(limit, 10), true, 0, 0, 1_100_000);
		at(T0 + 500_000);
		expect(acquire(limit, 1), false, 0, 600_000, 600_000);
		// half way through the next window the previous ten weigh five
		at(T0 + 1_500_000);
		expect(acquire(limit, 1), true, 4, 0, 100_000);
		expect(acquire(limit, 5), false, 4, 100_000, 100_000);
		expect(acquire(limit, 4), true, 0, 0, 100_000);
		at(T0 + 1_599_999);
		expect(acquire(limit, 1), false, 0, 1, 1);
		at(T0 + 1_600_000);
		expect(acquire(limit, 1), true, 0, 0, 100_000);
		at(T0 + 5 * SECOND);
		expect(acquire(limit, 1), true, 9, 0, 2 * SECOND);
	}

	@Test
	void slidingWindowCounterRejectsABurstOnEitherSideOfABoundary() {
		RateLimit limit = RateLimit.of("swc", Algorithm.SLIDING_WINDOW_COUNTER, 10, Duration.ofSeconds(1));
		at(T0 + SECOND - 1);
		assertThat(acquire(limit, 10).allowed()).isTrue();
		at(T0 + SECOND);
		expect(acquire(limit, 1), false, 0, 100_000, 100_000);
	}

	@ParameterizedTest
	@EnumSource(Algorithm.class)
	void decidesAtTheTimeOfTheClock(Algorithm algorithm) {
		RateLimit limit = RateLimit.of("clock", algorithm, 2, Duration.ofSeconds(1));
		at(T0 + 123_456);
		assertThat(acquireAll(new Acquisition(limit, "alice", 1)).timestampMicros()).isEqualTo(T0 + 123_456);
	}

	@ParameterizedTest
	@EnumSource(Algorithm.class)
	void retriesAreAdmittedExactlyAtRetryAfter(Algorithm algorithm) {
		RateLimit limit = RateLimit.of("retry", algorithm, 3, Duration.ofSeconds(1));
		at(T0 + 250_000);
		assertThat(acquire(limit, 2).allowed()).isTrue();
		RateLimitDecision rejected = acquire(limit, 2);
		assertThat(rejected.allowed()).isFalse();
		at(T0 + 250_000 + rejected.retryAfterMicros() - 1);
		assertThat(acquire(limit, 2).allowed()).isFalse();
		at(T0 + 250_000 + rejected.retryAfterMicros());
		assertThat(acquire(limit, 2).allowed()).isTrue();
	}

	@ParameterizedTest
	@EnumSource(Algorithm.class)
	void requestRejectedByOneLimitConsumesNothingFromTheOthers(Algorithm algorithm) {
		RateLimit wide = RateLimit.of("wide", algorithm, 5, Duration.ofSeconds(1));
		RateLimit narrow = RateLimit.of("narrow", algorithm, 1, Duration.ofSeconds(1));
		RateLimitResult admitted = acquireAll(new Acquisition(wide, "alice", 1), new Acquisition(narrow, "alice", 1));
		assertThat(admitted.allowed()).isTrue();
		for (int i = 0; i < 3; i++) {
			RateLimitResult rejected = acquireAll(new Acquisition(wide, "alice", 1),
					new Acquisition(narrow, "alice", 1));
			assertThat(rejected.allowed()).isFalse();
			assertThat(rejected.rejections()).extracting(RateLimitDecision::limit).containsExactly(narrow);
		}
		// only the first request took from the wide limit
		expect(acquire(wide, 4), true, 0, 0, resetOnceFiveOfFiveAreTaken(algorithm));
		assertThat(acquire(wide, 1).allowed()).isFalse();
	}

	@ParameterizedTest
	@EnumSource(Algorithm.class)
	void requestAdmittedByEveryLimitConsumesFromEach(Algorithm algorithm) {
		RateLimit perSecond = RateLimit.of("per-second", algorithm, 3, Duration.ofSeconds(1));
		RateLimit perMinute = RateLimit.of("per-minute", algorithm, 10, Duration.ofMinutes(1));
		RateLimitResult result = acquireAll(new Acquisition(perSecond, "alice", 2),
				new Acquisition(perMinute, "alice", 3));
		assertThat(result.allowed()).isTrue();
		assertThat(result.decisions()).extracting(RateLimitDecision::limit).containsExactly(perSecond, perMinute);
		assertThat(result.decisions()).extracting(RateLimitDecision::remaining).containsExactly(1L, 7L);
		assertThat(acquire(perSecond, 2).allowed()).isFalse();
		assertThat(acquire(perMinute, 8).allowed()).isFalse();
		assertThat(acquire(perMinute, 7).allowed()).isTrue();
	}

	@ParameterizedTest
	@EnumSource(Algorithm.class)
	void refundRestoresEveryLimit(Algorithm algorithm) {
		RateLimit first = RateLimit.of("first", algorithm, 3, Duration.ofSeconds(1));
		RateLimit second = RateLimit.of("second", algorithm, 5, Duration.ofSeconds(1));
		List<Acquisition> acquisitions = List.of(new Acquisition(first, "alice", 2),
				new Acquisition(second, "alice", 4));
		RateLimitResult result = this.store.tryAcquire(acquisitions);
		assertThat(result.allowed()).isTrue();
		at(T0 + 10);
		this.store.refund(acquisitions, result);
		RateLimitDecision decision = acquire(first, 3);
		assertThat(decision.allowed()).isTrue();
		assertThat(decision.remaining()).isZero();
		assertThat(acquire(second, 5).allowed()).isTrue();
	}

	@ParameterizedTest
	@EnumSource(Algorithm.class)
	void refundOfOneRequestLeavesTheOthers(Algorithm algorithm) {
		RateLimit limit = RateLimit.of("refund", algorithm, 4, Duration.ofSeconds(1));
		Acquisition one = new Acquisition(limit, "alice", 1);
		acquireAll(one);
		at(T0 + 5);
		RateLimitResult second = acquireAll(one);
		this.store.refund(List.of(one), second);
		RateLimitDecision decision = acquire(limit, 1);
		assertThat(decision.allowed()).isTrue();
		assertThat(decision.remaining()).isEqualTo(2);
		assertThat(acquire(limit, 3).allowed()).isFalse();
		assertThat(acquire(limit, 2).allowed()).isTrue();
	}

	@ParameterizedTest
	@EnumSource(Algorithm.class)
	void refundOfAnEarlierRequestWhoseOutcomeDidNotCountFreesExactlyItsCost(Algorithm algorithm) {
		// counting by outcome: requests finish out of order, and the first one is given back
		// seconds later, after the others were admitted
		RateLimit limit = RateLimit.of("failed-logins", algorithm, 3, Duration.ofHours(1));
		Acquisition one = new Acquisition(limit, "alice", 1);
		at(T0 + SECOND);
		RateLimitResult first = acquireAll(one);
		at(T0 + 2 * SECOND);
		acquireAll(one);
		at(T0 + 3 * SECOND);
		assertThat(acquireAll(one).allowed()).isTrue();
		assertThat(acquire(limit, 1).allowed()).isFalse();
		at(T0 + 4 * SECOND);
		this.store.refund(List.of(one), first);
		RateLimitDecision freed = acquire(limit, 1);
		assertThat(freed.allowed()).isTrue();
		assertThat(freed.remaining()).isZero();
		assertThat(acquire(limit, 1).allowed()).isFalse();
	}

	@ParameterizedTest
	@EnumSource(Algorithm.class)
	void distinctIdentitiesHaveIndependentBuckets(Algorithm algorithm) {
		RateLimit limit = RateLimit.of("orders", algorithm, 2, Duration.ofSeconds(1));
		assertThat(acquireAll(new Acquisition(limit, "alice", 2)).allowed()).isTrue();
		assertThat(acquireAll(new Acquisition(limit, "alice", 1)).allowed()).isFalse();
		RateLimitResult bob = acquireAll(new Acquisition(limit, "bob", 1));
		assertThat(bob.allowed()).isTrue();
		assertThat(bob.decisions().get(0).remaining()).isEqualTo(1);
	}

	@ParameterizedTest
	@EnumSource(Algorithm.class)
	void distinctLimitNamesHaveIndependentBuckets(Algorithm algorithm) {
		RateLimit orders = RateLimit.of("orders", algorithm, 2, Duration.ofSeconds(1));
		RateLimit search = RateLimit.of("search", algorithm, 2, Duration.ofSeconds(1));
		assertThat(acquire(orders, 2).allowed()).isTrue();
		assertThat(acquire(orders, 1).allowed()).isFalse();
		RateLimitDecision decision = acquire(search, 1);
		assertThat(decision.allowed()).isTrue();
		assertThat(decision.remaining()).isEqualTo(1);
	}

	@ParameterizedTest
	@EnumSource(Algorithm.class)
	void limitsOfOneNameShareABucketEachPayingItsCost(Algorithm algorithm) {
		RateLimit policy = RateLimit.of("shared", algorithm, 5, Duration.ofSeconds(1));
		assertThat(acquireAll(new Acquisition(policy, "alice", 1)).allowed()).isTrue();
		assertThat(acquireAll(new Acquisition(policy, "alice", 3)).allowed()).isTrue();
		RateLimitDecision decision = acquire(policy, 2);
		assertThat(decision.allowed()).isFalse();
		assertThat(decision.remaining()).isEqualTo(1);
	}

	@ParameterizedTest
	@EnumSource(Algorithm.class)
	void rejectsTwoAcquisitionsOfOneBucketInOneCall(Algorithm algorithm) {
		RateLimit limit = RateLimit.of("orders", algorithm, 5, Duration.ofSeconds(1));
		RateLimit sameName = RateLimit.of("orders", algorithm, 9, Duration.ofMinutes(1));
		assertThatIllegalArgumentException()
			.isThrownBy(() -> this.store.tryAcquire(List.of(new Acquisition(limit, "alice", 1),
					new Acquisition(limit, "bob", 1), new Acquisition(sameName, "alice", 2))))
			.withMessageContaining("alice")
			.withMessageContaining("appears twice");
		// and consumed nothing
		assertThat(acquire(limit, 5).allowed()).isTrue();
		assertThat(acquireAll(new Acquisition(limit, "bob", 5)).allowed()).isTrue();
	}

	@ParameterizedTest
	@EnumSource(Algorithm.class)
	void shadowLimitRecordsItsRejectionButNeverStopsTheRequest(Algorithm algorithm) {
		RateLimit enforced = RateLimit.of("enforced", Algorithm.FIXED_WINDOW, 10, Duration.ofMinutes(1));
		RateLimit shadow = new RateLimit("shadow", algorithm, 2, 2, Duration.ofMinutes(1), FailMode.OPEN, true);
		for (int i = 0; i < 2; i++) {
			RateLimitResult admitted = acquireAll(new Acquisition(enforced, "u", 1), new Acquisition(shadow, "u", 1));
			assertThat(admitted.allowed()).isTrue();
			assertThat(admitted.decisions().get(1).allowed()).isTrue();
		}
		RateLimitResult third = acquireAll(new Acquisition(enforced, "u", 1), new Acquisition(shadow, "u", 1));
		assertThat(third.allowed()).as("a shadow rejection never turns the request away").isTrue();
		assertThat(third.rejections()).isEmpty();
		assertThat(third.decisions().get(1).allowed()).as("but it is recorded").isFalse();
		assertThat(third.decisions().get(0).remaining()).as("the enforced limit paid").isEqualTo(7);
		assertThat(third.delayMicros()).isZero();
		// the enforced limit kept counting: 7 more fit, the next one is rejected for real
		for (int i = 0; i < 7; i++) {
			assertThat(acquireAll(new Acquisition(enforced, "u", 1), new Acquisition(shadow, "u", 1)).allowed()).isTrue();
		}
		RateLimitResult rejected = acquireAll(new Acquisition(enforced, "u", 1), new Acquisition(shadow, "u", 1));
		assertThat(rejected.allowed()).isFalse();
		assertThat(rejected.rejections()).extracting((decision) -> decision.limit().name()).containsExactly("enforced");
	}

	@Test
	void shadowLimitConsumesNothingWhenAnEnforcedLimitRejects() {
		RateLimit enforced = RateLimit.of("enforced", Algorithm.FIXED_WINDOW, 1, Duration.ofMinutes(1));
		RateLimit shadow = new RateLimit("shadow", Algorithm.FIXED_WINDOW, 5, 5, Duration.ofMinutes(1), FailMode.OPEN,
				true);
		acquireAll(new Acquisition(enforced, "u", 1), new Acquisition(shadow, "u", 1));
		RateLimitResult rejected = acquireAll(new Acquisition(enforced, "u", 1), new Acquisition(shadow, "u", 1));
		assertThat(rejected.allowed()).isFalse();
		assertThat(rejected.decisions().get(1).remaining()).isEqualTo(4);
		assertThat(acquireAll(new Acquisition(shadow, "u", 1)).decisions().get(0).remaining()).isEqualTo(3);
	}

	@ParameterizedTest
	@EnumSource(Algorithm.class)
	void inspectReadsABucketWithoutConsumingOrCreatingIt(Algorithm algorithm) {
		RateLimit limit = RateLimit.of("inspected", algorithm, 3, Duration.ofSeconds(1));
		at(T0 + 250_000);
		BucketSnapshot fresh = this.store.inspect(limit, "alice");
		assertThat(fresh.exists()).as("exists").isFalse();
		assertThat(fresh.remaining()).isEqualTo(3);
		assertThat(fresh.retryAfterMicros()).isZero();
		assertThat(this.store.inspect(limit, "alice").exists()).as("inspecting created nothing").isFalse();
		assertThat(acquire(limit, 2).allowed()).isTrue();
		BucketSnapshot used = this.store.inspect(limit, "alice");
		assertThat(used.exists()).as("exists").isTrue();
		assertThat(used.remaining()).isEqualTo(1);
		assertThat(used.retryAfterMicros()).isZero();
		assertThat(this.store.inspect(limit, "alice")).isEqualTo(used);
		// the two inspections took nothing: the last unit is still there, and reset as a request sees it
		RateLimitDecision last = acquire(limit, 1);
		assertThat(last.allowed()).isTrue();
		assertThat(used.resetMicros()).isEqualTo(last.resetMicros());
		BucketSnapshot empty = this.store.inspect(limit, "alice");
		RateLimitDecision rejected = acquire(limit, 1);
		assertThat(rejected.allowed()).isFalse();
		assertThat(empty.remaining()).isZero();
		assertThat(empty.retryAfterMicros()).isEqualTo(rejected.retryAfterMicros());
		assertThat(empty.resetMicros()).isEqualTo(rejected.resetMicros());
		at(T0 + 250_000 + rejected.retryAfterMicros());
		BucketSnapshot refilled = this.store.inspect(limit, "alice");
		assertThat(refilled.remaining()).isPositive();
		assertThat(refilled.retryAfterMicros()).isZero();
		assertThat(this.store.inspect(limit, "bob").exists()).as("another identity's bucket").isFalse();
	}

	@ParameterizedTest
	@EnumSource(Algorithm.class)
	void inspectReportsNothingToWaitForWhenTheQuotaIsWhole(Algorithm algorithm) {
		RateLimit limit = RateLimit.of("whole", algorithm, 3, Duration.ofSeconds(1));
		at(T0 + 250_000);
		BucketSnapshot fresh = this.store.inspect(limit, "alice");
		assertThat(fresh.remaining()).isEqualTo(3);
		assertThat(fresh.resetMicros()).as("reset of a bucket without state").isZero();
		assertThat(acquire(limit, 1).allowed()).isTrue();
		BucketSnapshot used = this.store.inspect(limit, "alice");
		assertThat(used.remaining()).isEqualTo(2);
		if (algorithm != Algorithm.CONCURRENCY) {
			// a call in flight has no time at which it is over: its permit comes back when it is
			assertThat(used.resetMicros()).isPositive();
		}
		// two periods later every algorithm has its whole quota back, whether or not the state is kept
		at(T0 + 250_000 + 2 * SECOND);
		BucketSnapshot refilled = this.store.inspect(limit, "alice");
		assertThat(refilled.remaining()).isEqualTo(3);
		assertThat(refilled.resetMicros()).as("reset of a bucket whole again").isZero();
		assertThat(refilled.retryAfterMicros()).isZero();
	}

	@ParameterizedTest
	@EnumSource(Algorithm.class)
	void resetForgetsOneIdentitysBucket(Algorithm algorithm) {
		RateLimit limit = RateLimit.of("reset", algorithm, 3, Duration.ofMinutes(1));
		assertThat(acquire(limit, 3).allowed()).isTrue();
		assertThat(acquireAll(new Acquisition(limit, "bob", 3)).allowed()).isTrue();
		assertThat(acquire(limit, 1).allowed()).isFalse();
		assertThat(this.store.reset(limit, "alice")).as("a bucket was there").isTrue();
		BucketSnapshot after = this.store.inspect(limit, "alice");
		assertThat(after.exists()).isFalse();
		assertThat(after.remaining()).isEqualTo(3);
		RateLimitDecision admitted = acquire(limit, 3);
		assertThat(admitted.allowed()).as("the next request is admitted as if new").isTrue();
		assertThat(admitted.remaining()).isZero();
		assertThat(acquireAll(new Acquisition(limit, "bob", 1)).allowed()).as("bob's bucket is untouched").isFalse();
		assertThat(this.store.reset(limit, "carol")).as("no bucket to forget").isFalse();
	}

	@Test
	void resetLeavesOtherLimitsOfTheIdentity() {
		RateLimit orders = RateLimit.of("orders", Algorithm.FIXED_WINDOW, 1, Duration.ofMinutes(1));
		RateLimit search = RateLimit.of("search", Algorithm.SLIDING_WINDOW_LOG, 1, Duration.ofMinutes(1));
		assertThat(acquireAll(new Acquisition(orders, "alice", 1), new Acquisition(search, "alice", 1)).allowed())
			.isTrue();
		assertThat(this.store.reset(search, "alice")).isTrue();
		assertThat(acquire(search, 1).allowed()).isTrue();
		assertThat(acquire(orders, 1).allowed()).isFalse();
		assertThat(this.store.inspect(orders, "alice").remaining()).isZero();
	}

	@Test
	void resetAllForgetsEveryBucketOfEveryLimit() {
		RateLimit orders = RateLimit.of("orders", Algorithm.FIXED_WINDOW, 1, Duration.ofMinutes(1));
		RateLimit search = RateLimit.of("search", Algorithm.SLIDING_WINDOW_LOG, 2, Duration.ofMinutes(1));
		RateLimit tokens = RateLimit.of("tokens", Algorithm.TOKEN_BUCKET, 1, Duration.ofMinutes(1));
		List<Acquisition> everything = List.of(new Acquisition(orders, "alice", 1), new Acquisition(search, "alice", 2),
				new Acquisition(tokens, "alice", 1), new Acquisition(orders, "bob", 1), new Acquisition(tokens, "bob", 1));
		assertThat(this.store.tryAcquire(everything).allowed()).isTrue();
		assertThat(this.store.tryAcquire(everything).allowed()).as("every bucket is used up").isFalse();
		this.store.resetAll();
		for (Acquisition acquisition : everything) {
			assertThat(this.store.inspect(acquisition.limit(), acquisition.identity()).exists())
				.as("bucket %s", acquisition.key())
				.isFalse();
		}
		assertThat(this.store.tryAcquire(everything).allowed()).as("every quota is whole again").isTrue();
		this.store.resetAll();
		this.store.resetAll();
		assertThat(this.store.tryAcquire(everything).allowed()).as("resetting an empty store changes nothing")
			.isTrue();
	}

	@Test
	void tokenBucketReservesSlotsOneIntervalApartUpToTheLongestWait() {
		// one token, one every 100ms; callers may wait up to 350ms for theirs
		RateLimit limit = new RateLimit("reserve", Algorithm.TOKEN_BUCKET, 1, 10, Duration.ofSeconds(1));
		long maxDelay = 350_000;
		expectReserved(reserve(limit, maxDelay), 0, 100_000);
		expectReserved(reserve(limit, maxDelay), 100_000, 200_000);
		expectReserved(reserve(limit, maxDelay), 200_000, 300_000);
		expectReserved(reserve(limit, maxDelay), 300_000, 400_000);
		// the next slot is 400ms away: rejected, and nothing is reserved
		expect(reserve(limit, maxDelay), false, 0, 400_000, 400_000);
		at(T0 + 50_000);
		expectReserved(reserve(limit, maxDelay), 350_000, 450_000);
		// a caller that does not wait is rejected until the reserved slots have passed
		expect(acquire(limit, 1), false, 0, 450_000, 450_000);
		at(T0 + 500_000);
		expect(acquire(limit, 1), true, 0, 0, 100_000);
	}

	@Test
	void leakyBucketReservesADrainSlotBeyondItsQueue() {
		// a queue of 2 drained every 100ms; callers may wait up to 300ms for their drain slot
		RateLimit limit = new RateLimit("reserve", Algorithm.LEAKY_BUCKET, 2, 10, Duration.ofSeconds(1));
		long maxDelay = 300_000;
		assertThat(reserve(limit, maxDelay).delayMicros()).isZero();
		assertThat(reserve(limit, maxDelay).delayMicros()).isEqualTo(100_000);
		// the queue is full: the next ones reserve the drain slots after it
		expectReserved(reserve(limit, maxDelay), 200_000, 200_000);
		expectReserved(reserve(limit, maxDelay), 300_000, 300_000);
		expect(reserve(limit, maxDelay), false, 0, 300_000, 300_000);
	}

	@ParameterizedTest
	@EnumSource(value = Algorithm.class, names = { "FIXED_WINDOW", "SLIDING_WINDOW_LOG", "SLIDING_WINDOW_COUNTER" })
	void windowAlgorithmsReserveNothing(Algorithm algorithm) {
		RateLimit limit = RateLimit.of("reserve", algorithm, 1, Duration.ofSeconds(1));
		assertThat(reserve(limit, 10 * SECOND).allowed()).isTrue();
		RateLimitDecision rejected = reserve(limit, 10 * SECOND);
		assertThat(rejected.allowed()).isFalse();
		assertThat(rejected.delayMicros()).isZero();
		// exactly what a caller that does not wait is told
		assertThat(acquire(limit, 1)).isEqualTo(rejected);
	}

	@ParameterizedTest
	@EnumSource(value = Algorithm.class, names = { "TOKEN_BUCKET", "LEAKY_BUCKET" })
	void reservationIsNotMadeWhenAnotherLimitRejects(Algorithm algorithm) {
		RateLimit bucket = new RateLimit("bucket", algorithm, 1, 10, Duration.ofSeconds(1));
		RateLimit window = RateLimit.of("window", Algorithm.FIXED_WINDOW, 1, Duration.ofMinutes(1));
		List<Acquisition> both = List.of(new Acquisition(bucket, "alice", 1), new Acquisition(window, "alice", 1));
		assertThat(this.store.tryAcquire(both, SECOND).allowed()).isTrue();
		RateLimitResult rejected = this.store.tryAcquire(both, SECOND);
		assertThat(rejected.allowed()).isFalse();
		assertThat(rejected.rejections()).extracting(RateLimitDecision::limit).containsExactly(window);
		// the bucket's slot at 100ms is still free
		at(T0 + 100_000);
		expect(acquire(bucket, 1), true, 0, 0, 100_000);
	}

	@Test
	void refundGivesAReservedSlotBack() {
		RateLimit limit = new RateLimit("reserve", Algorithm.TOKEN_BUCKET, 1, 10, Duration.ofSeconds(1));
		List<Acquisition> one = List.of(new Acquisition(limit, "alice", 1));
		this.store.tryAcquire(one, SECOND);
		RateLimitResult second = this.store.tryAcquire(one, SECOND);
		assertThat(second.delayMicros()).isEqualTo(100_000);
		this.store.tryAcquire(one, SECOND);
		this.store.refund(one, second);
		// the refund moved every later slot one interval earlier
		assertThat(this.store.tryAcquire(one, SECOND).delayMicros()).isEqualTo(200_000);
	}

	@Test
	void calendarDayTurnsOverAtLocalMidnightNotAtMidnightUtc() {
		RateLimit limit = RateLimit.calendar("daily", 3, CalendarPeriod.DAY, BERLIN);
		at(berlin("2026-01-15T23:00"));
		RateLimitDecision first = acquire(limit, 2);
		expect(first, true, 1, 0, HOUR);
		assertThat(first.windowMicros()).as("window").isEqualTo(24 * HOUR);
		expect(acquire(limit, 2), false, 1, HOUR, HOUR);
		at(berlin("2026-01-16T00:00") - 1);
		expect(acquire(limit, 2), false, 1, 1, 1);
		// local midnight is 23:00 UTC: a new day
		at(berlin("2026-01-16T00:00"));
		expect(acquire(limit, 3), true, 0, 0, 24 * HOUR);
		// midnight UTC (01:00 in Berlin) is nothing special
		at(berlin("2026-01-16T01:00"));
		RateLimitDecision rejected = acquire(limit, 1);
		expect(rejected, false, 0, 23 * HOUR, 23 * HOUR);
		assertThat(rejected.windowMicros()).as("window").isEqualTo(24 * HOUR);
	}

	@Test
	void calendarDayLastsTwentyThreeHoursWhenSummerTimeBegins() {
		RateLimit limit = RateLimit.calendar("daily-spring", 2, CalendarPeriod.DAY, BERLIN);
		at(berlin("2026-03-29T00:00"));
		RateLimitDecision first = acquire(limit, 2);
		expect(first, true, 0, 0, 23 * HOUR);
		assertThat(first.windowMicros()).as("window").isEqualTo(23 * HOUR);
		// 12:00 summer time, eleven hours after midnight: twelve hours of the day are left
		at(berlin("2026-03-29T12:00"));
		expect(acquire(limit, 1), false, 0, 12 * HOUR, 12 * HOUR);
		at(berlin("2026-03-30T00:00") - 1);
		expect(acquire(limit, 1), false, 0, 1, 1);
		at(berlin("2026-03-30T00:00"));
		RateLimitDecision next = acquire(limit, 1);
		expect(next, true, 1, 0, 24 * HOUR);
		assertThat(next.windowMicros()).as("window").isEqualTo(24 * HOUR);
	}

	@Test
	void calendarDayLastsTwentyFiveHoursWhenSummerTimeEnds() {
		RateLimit limit = RateLimit.calendar("daily-autumn", 2, CalendarPeriod.DAY, BERLIN);
		at(berlin("2026-10-25T00:00"));
		RateLimitDecision first = acquire(limit, 2);
		expect(first, true, 0, 0, 25 * HOUR);
		assertThat(first.windowMicros()).as("window").isEqualTo(25 * HOUR);
		// 24 hours after local midnight it is 23:00 winter time, still the same day
		at(berlin("2026-10-25T00:00") + 24 * HOUR);
		RateLimitDecision late = acquire(limit, 1);
		expect(late, false, 0, HOUR, HOUR);
		assertThat(late.windowMicros()).as("window").isEqualTo(25 * HOUR);
		at(berlin("2026-10-26T00:00"));
		RateLimitDecision next = acquire(limit, 2);
		expect(next, true, 0, 0, 24 * HOUR);
		assertThat(next.windowMicros()).as("window").isEqualTo(24 * HOUR);
	}

	@Test
	void calendarMonthTurnsOverOnTheFirstAtLocalMidnightWhateverItsLength() {
		RateLimit limit = RateLimit.calendar("monthly", 5, CalendarPeriod.MONTH, BERLIN);
		at(berlin("2026-01-20T12:00"));
		RateLimitDecision january = acquire(limit, 5);
		expect(january, true, 0, 0, berlin("2026-02-01T00:00") - berlin("2026-01-20T12:00"));
		assertThat(january.windowMicros()).as("31 days").isEqualTo(31 * 24 * HOUR);
		at(berlin("2026-02-01T00:00") - 1);
		expect(acquire(limit, 1), false, 0, 1, 1);
		at(berlin("2026-02-01T00:00"));
		RateLimitDecision february = acquire(limit, 4);
		expect(february, true, 1, 0, 28 * 24 * HOUR);
		assertThat(february.windowMicros()).as("28 days").isEqualTo(28 * 24 * HOUR);
		at(berlin("2026-02-28T23:00"));
		expect(acquire(limit, 2), false, 1, HOUR, HOUR);
		at(berlin("2026-03-01T00:00"));
		RateLimitDecision march = acquire(limit, 5);
		// summer time begins on the 29th: March is an hour short of 31 days
		expect(march, true, 0, 0, 31 * 24 * HOUR - HOUR);
		assertThat(march.windowMicros()).as("31 days less an hour").isEqualTo(31 * 24 * HOUR - HOUR);
	}

	@Test
	void calendarMonthHoldsABudgetOfBillions() {
		// tokens of a language model per tenant and month: far more than a request count
		RateLimit limit = RateLimit.calendar("monthly-tokens", 2_000_000_000L, CalendarPeriod.MONTH, BERLIN);
		at(berlin("2026-01-20T12:00"));
		expect(acquire(limit, 1_999_999_000L), true, 1_000, 0, berlin("2026-02-01T00:00") - berlin("2026-01-20T12:00"));
		expect(acquire(limit, 1_001), false, 1_000, berlin("2026-02-01T00:00") - berlin("2026-01-20T12:00"),
				berlin("2026-02-01T00:00") - berlin("2026-01-20T12:00"));
		expect(acquire(limit, 1_000), true, 0, 0, berlin("2026-02-01T00:00") - berlin("2026-01-20T12:00"));
		at(berlin("2026-02-01T00:00"));
		expect(acquire(limit, 2_000_000_000L), true, 0, 0, 28 * 24 * HOUR);
	}

	@Test
	void calendarWeekTurnsOverOnMondayAtLocalMidnight() {
		RateLimit limit = RateLimit.calendar("weekly", 2, CalendarPeriod.WEEK, BERLIN);
		// Thursday
		at(berlin("2026-01-15T10:00"));
		RateLimitDecision thursday = acquire(limit, 2);
		expect(thursday, true, 0, 0, berlin("2026-01-19T00:00") - berlin("2026-01-15T10:00"));
		assertThat(thursday.windowMicros()).as("window").isEqualTo(7 * 24 * HOUR);
		// Sunday night
		at(berlin("2026-01-18T23:00"));
		expect(acquire(limit, 1), false, 0, HOUR, HOUR);
		// Monday
		at(berlin("2026-01-19T00:00"));
		expect(acquire(limit, 2), true, 0, 0, 7 * 24 * HOUR);
	}

	@Test
	void calendarRefundGivesBackOnlyWhileItsWindowIsCurrent() {
		RateLimit limit = RateLimit.calendar("daily-refund", 2, CalendarPeriod.DAY, BERLIN);
		Acquisition one = new Acquisition(limit, "alice", 1);
		at(berlin("2026-01-15T23:59:58"));
		RateLimitResult yesterday = acquireAll(one);
		RateLimitResult refunded = acquireAll(one);
		this.store.refund(List.of(one), refunded);
		expect(acquire(limit, 1), true, 0, 0, 2 * SECOND);
		at(berlin("2026-01-16T00:00:01"));
		expect(acquire(limit, 1), true, 1, 0, 24 * HOUR - SECOND);
		// yesterday's acquisition is not today's to give back
		this.store.refund(List.of(one), yesterday);
		expect(acquire(limit, 1), true, 0, 0, 24 * HOUR - SECOND);
		expect(acquire(limit, 1), false, 0, 24 * HOUR - SECOND, 24 * HOUR - SECOND);
	}

	@Test
	void inspectOfACalendarQuotaPointsAtTheNextLocalMidnight() {
		RateLimit limit = RateLimit.calendar("daily-inspected", 2, CalendarPeriod.DAY, BERLIN);
		at(berlin("2026-10-25T20:00"));
		assertThat(acquire(limit, 2).allowed()).isTrue();
		BucketSnapshot used = this.store.inspect(limit, "alice");
		assertThat(used.exists()).isTrue();
		assertThat(used.remaining()).isZero();
		assertThat(used.retryAfterMicros()).isEqualTo(4 * HOUR);
		assertThat(used.resetMicros()).isEqualTo(4 * HOUR);
	}

	@Test
	void decidesAnEmptyRequestAsAllowed() {
		RateLimitResult result = this.store.tryAcquire(List.of());
		assertThat(result.allowed()).isTrue();
		assertThat(result.decisions()).isEmpty();
	}

	/** Reset once a fresh limit of five per second has been taken whole at one instant. */
	@Test
	void concurrencyLimitAdmitsAtMostCapacityInFlightUntilCallsGiveTheirPermitsBack() {
		RateLimit exports = RateLimit.of("exports", Algorithm.CONCURRENCY, 2, Duration.ofMinutes(1));
		RateLimitResult first = acquireAll(new Acquisition(exports, "acme", 1));
		expect(first.decisions().get(0), true, 1, 0, 0);
		at(T0 + 10 * SECOND);
		RateLimitResult second = acquireAll(new Acquisition(exports, "acme", 1));
		expect(second.decisions().get(0), true, 0, 0, 0);
		// a third call waits for a release, which may come at any moment: it may retry within a second
		expect(acquireAll(new Acquisition(exports, "acme", 1)).decisions().get(0), false, 0, SECOND, SECOND);
		assertThat(acquireAll(new Acquisition(exports, "globex", 2)).allowed()).as("another identity").isTrue();
		this.store.refund(List.of(new Acquisition(exports, "acme", 1)), first);
		RateLimitResult third = acquireAll(new Acquisition(exports, "acme", 1));
		expect(third.decisions().get(0), true, 0, 0, 0);
		this.store.refund(List.of(new Acquisition(exports, "acme", 1)), second);
		this.store.refund(List.of(new Acquisition(exports, "acme", 1)), third);
		expect(acquireAll(new Acquisition(exports, "acme", 2)).decisions().get(0), true, 0, 0, 0);
	}

	@Test
	void concurrencyPermitsOfALostHolderExpireAfterTheLeaseTime() {
		RateLimit exports = RateLimit.of("exports", Algorithm.CONCURRENCY, 2, Duration.ofSeconds(30));
		RateLimitResult lost = acquireAll(new Acquisition(exports, "acme", 1));
		at(T0 + 20 * SECOND);
		RateLimitResult running = acquireAll(new Acquisition(exports, "acme", 1));
		assertThat(running.allowed()).isTrue();
		at(T0 + 25 * SECOND);
		// told to come back when the lost lease runs out, 5s away, but within a second
		expect(acquireAll(new Acquisition(exports, "acme", 1)).decisions().get(0), false, 0, SECOND, SECOND);
		at(T0 + 29 * SECOND + 600_000);
		expect(acquireAll(new Acquisition(exports, "acme", 1)).decisions().get(0), false, 0, 400_000, 400_000);
		at(T0 + 30 * SECOND);
		RateLimitResult replacing = acquireAll(new Acquisition(exports, "acme", 1));
		expect(replacing.decisions().get(0), true, 0, 0, 0);
		// giving back the expired lease late takes nothing from the calls holding theirs
		this.store.refund(List.of(new Acquisition(exports, "acme", 1)), lost);
		assertThat(acquireAll(new Acquisition(exports, "acme", 1)).allowed()).isFalse();
		this.store.refund(List.of(new Acquisition(exports, "acme", 1)), running);
		assertThat(acquireAll(new Acquisition(exports, "acme", 1)).allowed()).isTrue();
	}

	@Test
	void concurrencyCostsHoldSeveralPermitsAndLeasesTakenAtOneInstantAreGivenBackOneCallAtATime() {
		RateLimit slots = RateLimit.of("slots", Algorithm.CONCURRENCY, 5, Duration.ofMinutes(1));
		RateLimitResult heavy = acquireAll(new Acquisition(slots, "acme", 3));
		RateLimitResult light = acquireAll(new Acquisition(slots, "acme", 1));
		expect(light.decisions().get(0), true, 1, 0, 0);
		expect(acquireAll(new Acquisition(slots, "acme", 2)).decisions().get(0), false, 1, SECOND, SECOND);
		// both calls started at the same instant: giving back the light one frees one permit only
		this.store.refund(List.of(new Acquisition(slots, "acme", 1)), light);
		expect(acquireAll(new Acquisition(slots, "acme", 2)).decisions().get(0), true, 0, 0, 0);
		this.store.refund(List.of(new Acquisition(slots, "acme", 3)), heavy);
		expect(acquireAll(new Acquisition(slots, "acme", 3)).decisions().get(0), true, 0, 0, 0);
	}

	@ParameterizedTest
	@EnumSource(Algorithm.class)
	void concurrentCallersOfOneBucketAreAdmittedExactlyUpToItsCapacity(Algorithm algorithm) throws Exception {
		// the clock stands still: nothing refills, drains or expires while they race
		RateLimit limit = RateLimit.of("hot", algorithm, HOT_CAPACITY, Duration.ofHours(1));
		int admitted = admittedConcurrently(List.of(new Acquisition(limit, "hot", 1)));
		assertThat(admitted).as("admitted of %d attempts", CALLERS * ATTEMPTS_PER_CALLER).isEqualTo(HOT_CAPACITY);
		assertThat(this.store.inspect(limit, "hot").remaining()).isZero();
	}

	@Test
	void concurrentCallersOfTwoLimitsConsumeFromEachExactlyWhatWasAdmitted() throws Exception {
		RateLimit narrow = RateLimit.of("narrow", Algorithm.TOKEN_BUCKET, HOT_CAPACITY, Duration.ofHours(1));
		RateLimit wide = RateLimit.of("wide", Algorithm.FIXED_WINDOW, 4 * HOT_CAPACITY, Duration.ofHours(1));
		int admitted = admittedConcurrently(
				List.of(new Acquisition(wide, "hot", 3), new Acquisition(narrow, "hot", 1)));
		assertThat(admitted).isEqualTo(HOT_CAPACITY);
		assertThat(this.store.inspect(narrow, "hot").remaining()).isZero();
		// every rejected request, turned away by the narrow limit, left the wide one untouched
		assertThat(this.store.inspect(wide, "hot").remaining()).isEqualTo(4 * HOT_CAPACITY - 3 * admitted);
	}

	@ParameterizedTest
	@EnumSource(Algorithm.class)
	void bucketIdleForItsIdleTimeDecidesAsAFreshBucket(Algorithm algorithm) {
		RateLimit limit = RateLimit.of("idle", algorithm, 3, Duration.ofSeconds(1));
		at(T0 + 250_000);
		assertThat(acquire(limit, 3).allowed()).isTrue();
		assertThat(acquire(limit, 1).allowed()).isFalse();
		// whether the store forgot the state or still holds it, it no longer counts
		at(T0 + 250_000 + limit.idleTtlMicros());
		BucketSnapshot idle = this.store.inspect(limit, "alice");
		assertThat(idle.remaining()).as("remaining").isEqualTo(3);
		assertThat(idle.retryAfterMicros()).as("retry-after").isZero();
		assertThat(idle.resetMicros()).as("reset").isZero();
		RateLimitDecision neverSeen = acquireAll(new Acquisition(limit, "newcomer", 3)).decisions().get(0);
		RateLimitDecision expired = acquire(limit, 3);
		expect(expired, true, 0, neverSeen.retryAfterMicros(), neverSeen.resetMicros());
		assertThat(expired.delayMicros()).as("delay").isEqualTo(neverSeen.delayMicros());
	}

	@Test
	void calendarQuotaIdleForItsIdleTimeDecidesAsAFreshQuota() {
		RateLimit limit = RateLimit.calendar("daily-idle", 2, CalendarPeriod.DAY, BERLIN);
		at(berlin("2026-03-28T12:00"));
		assertThat(acquire(limit, 2).allowed()).isTrue();
		at(berlin("2026-03-28T12:00") + limit.idleTtlMicros());
		BucketSnapshot idle = this.store.inspect(limit, "alice");
		assertThat(idle.remaining()).as("remaining").isEqualTo(2);
		assertThat(idle.retryAfterMicros()).as("retry-after").isZero();
		RateLimitDecision neverSeen = acquireAll(new Acquisition(limit, "newcomer", 2)).decisions().get(0);
		expect(acquire(limit, 2), true, 0, 0, neverSeen.resetMicros());
	}

	@Test
	void failoverDecidesOnTheFallbackWhileTheStoreFailsAndOnTheStoreOnceItRecovers() throws Exception {
		RateLimit limit = RateLimit.of("failover", Algorithm.TOKEN_BUCKET, 100, Duration.ofHours(1));
		List<Acquisition> one = List.of(new Acquisition(limit, "alice", 1));
		RateLimitStore failover = RateLimitStores.builder(this.store)
			.fallback(RateLimitStores.inMemory(1000), 1.0)
			.circuitBreaker(1, Duration.ofMillis(50))
			.build();
		failStore();
		try {
			for (int i = 0; i < 3; i++) {
				RateLimitResult decided = failover.tryAcquire(one);
				assertThat(decided.store()).as("decided by").isEqualTo(RateLimitResult.FALLBACK);
				assertThat(decided.allowed()).isTrue();
			}
		}
		finally {
			recoverStore();
		}
		// the breaker lets a call through every 50ms: the first that succeeds closes it
		long deadline = System.nanoTime() + RECOVERY_WAIT.toNanos();
		RateLimitResult decided = failover.tryAcquire(one);
		while (!decided.store().equals(this.store.name()) && System.nanoTime() < deadline) {
			Thread.sleep(10);
			decided = failover.tryAcquire(one);
		}
		assertThat(decided.store()).as("decided by, %s after recovering", RECOVERY_WAIT)
			.isEqualTo(this.store.name());
		assertThat(decided.allowed()).isTrue();
	}

	@ParameterizedTest
	@EnumSource(value = Algorithm.class, names = "CONCURRENCY", mode = EnumSource.Mode.EXCLUDE)
	void settleBelowTheReservationGivesTheDifferenceBack(Algorithm algorithm) {
		RateLimit limit = RateLimit.of("settle-below", algorithm, 10, Duration.ofHours(1));
		List<Acquisition> reserved = List.of(new Acquisition(limit, "alice", 6));
		RateLimitResult decided = this.store.tryAcquire(reserved);
		assertThat(decided.allowed()).isTrue();
		at(T0 + SECOND);
		this.store.settle(reserved, decided, new long[] { 2 });
		assertThat(this.store.inspect(limit, "alice").remaining()).isEqualTo(8);
		assertThat(acquire(limit, 8).allowed()).isTrue();
		assertThat(acquire(limit, 1).allowed()).isFalse();
	}

	@ParameterizedTest
	@EnumSource(value = Algorithm.class, names = "CONCURRENCY", mode = EnumSource.Mode.EXCLUDE)
	void settleAtTheReservationChangesNothing(Algorithm algorithm) {
		RateLimit limit = RateLimit.of("settle-equal", algorithm, 10, Duration.ofHours(1));
		List<Acquisition> reserved = List.of(new Acquisition(limit, "alice", 4));
		RateLimitResult decided = this.store.tryAcquire(reserved);
		this.store.settle(reserved, decided, new long[] { 4 });
		assertThat(this.store.inspect(limit, "alice").remaining()).isEqualTo(6);
		assertThat(acquire(limit, 7).allowed()).isFalse();
		assertThat(acquire(limit, 6).allowed()).isTrue();
	}

	@ParameterizedTest
	@EnumSource(value = Algorithm.class, names = "CONCURRENCY", mode = EnumSource.Mode.EXCLUDE)
	void settleBeyondTheReservationPutsTheBucketInDebtUntilItIsPaid(Algorithm algorithm) {
		// 10 per second; 4 reserved at T0, 25 used, settled 100ms later
		RateLimit limit = RateLimit.of("settle-debt", algorithm, 10, Duration.ofSeconds(1));
		List<Acquisition> reserved = List.of(new Acquisition(limit, "alice", 4));
		RateLimitResult decided = this.store.tryAcquire(reserved);
		at(T0 + 100_000);
		this.store.settle(reserved, decided, new long[] { 25 });
		long paid = switch (algorithm) {
			// 25 tokens of 100ms from T0 is full again at 2.5s: one token fits 900ms before
			case TOKEN_BUCKET, LEAKY_BUCKET -> T0 + 1_600_000;
			// the window carries the debt until it ends
			case FIXED_WINDOW -> T0 + SECOND;
			// the 21 units charged at settlement count for a whole period from then on
			case SLIDING_WINDOW_LOG -> T0 + 1_100_000;
			// the previous window's 25 must have decayed to 9: 64% into the next window
			case SLIDING_WINDOW_COUNTER -> T0 + 1_640_000;
			case CONCURRENCY -> throw new IllegalStateException();
		};
		BucketSnapshot inDebt = this.store.inspect(limit, "alice");
		assertThat(inDebt.remaining()).as("remaining in debt").isZero();
		assertThat(inDebt.retryAfterMicros()).as("inspected retry-after").isEqualTo(paid - (T0 + 100_000));
		RateLimitDecision refused = acquire(limit, 1);
		expect(refused, false, 0, paid - (T0 + 100_000), refused.resetMicros());
		at(paid - 1);
		assertThat(acquire(limit, 1).allowed()).as("one microsecond before the debt is paid").isFalse();
		at(paid);
		assertThat(acquire(limit, 1).allowed()).as("once the debt is paid").isTrue();
	}

	@Test
	void tokenBucketInDebtRefillsTheDebtBeforeAWholeQuota() {
		// 4 tokens, one every 250ms: 12 used beyond a reservation of 2 leaves a debt of 10
		RateLimit limit = new RateLimit("settle-refill", Algorithm.TOKEN_BUCKET, 4, 4, Duration.ofSeconds(1));
		List<Acquisition> reserved = List.of(new Acquisition(limit, "alice", 2));
		RateLimitResult decided = this.store.tryAcquire(reserved);
		this.store.settle(reserved, decided, new long[] { 14 });
		// the debt of 10 tokens is paid at 2.5s; the first token comes back 250ms later
		at(T0 + 2_500_000);
		assertThat(this.store.inspect(limit, "alice").remaining()).isZero();
		at(T0 + 2_750_000);
		expect(acquire(limit, 1), true, 0, 0, 250_000);
		at(T0 + 10 * SECOND);
		assertThat(acquire(limit, 4).allowed()).isTrue();
	}

	@Test
	void settleAdjustsEveryLimitOfOneCall() {
		RateLimit perMinute = RateLimit.of("settle-rpm", Algorithm.TOKEN_BUCKET, 10, Duration.ofMinutes(1));
		RateLimit tokens = RateLimit.of("settle-tpm", Algorithm.FIXED_WINDOW, 100, Duration.ofMinutes(1));
		RateLimit daily = RateLimit.calendar("settle-daily", 1_000, CalendarPeriod.DAY, BERLIN);
		List<Acquisition> reserved = List.of(new Acquisition(perMinute, "alice", 2), new Acquisition(tokens, "alice", 40),
				new Acquisition(daily, "alice", 40));
		RateLimitResult decided = this.store.tryAcquire(reserved);
		assertThat(decided.allowed()).isTrue();
		this.store.settle(reserved, decided, new long[] { 1, 130, 130 });
		assertThat(this.store.inspect(perMinute, "alice").remaining()).isEqualTo(9);
		assertThat(this.store.inspect(tokens, "alice").remaining()).isZero();
		assertThat(this.store.inspect(daily, "alice").remaining()).isEqualTo(870);
		// the minute's 30 units of debt turn every request away until the window ends
		assertThat(acquireAll(new Acquisition(perMinute, "alice", 1), new Acquisition(tokens, "alice", 1))
			.rejections()).extracting(RateLimitDecision::limit).containsExactly(tokens);
		assertThat(this.store.inspect(perMinute, "alice").remaining()).as("untouched by the rejection").isEqualTo(9);
	}

	@Test
	void settleAfterTheReservationsWindowGivesNothingBackAndChargesTheCurrentWindow() {
		RateLimit limit = RateLimit.of("settle-late", Algorithm.FIXED_WINDOW, 10, Duration.ofSeconds(1));
		at(T0 + 900_000);
		List<Acquisition> alice = List.of(new Acquisition(limit, "alice", 5));
		RateLimitResult aliceDecided = this.store.tryAcquire(alice);
		List<Acquisition> bob = List.of(new Acquisition(limit, "bob", 5));
		RateLimitResult bobDecided = this.store.tryAcquire(bob);
		at(T0 + 1_200_000);
		this.store.settle(alice, aliceDecided, new long[] { 2 });
		this.store.settle(bob, bobDecided, new long[] { 8 });
		assertThat(this.store.inspect(limit, "alice").remaining()).as("given back to no window").isEqualTo(10);
		assertThat(this.store.inspect(limit, "bob").remaining()).as("charged to this window").isEqualTo(7);
	}

	@Test
	void calendarSettleAfterMidnightChargesToday() {
		RateLimit limit = RateLimit.calendar("settle-daily-late", 10, CalendarPeriod.DAY, BERLIN);
		at(berlin("2026-01-15T23:59:58"));
		List<Acquisition> reserved = List.of(new Acquisition(limit, "alice", 4));
		RateLimitResult decided = this.store.tryAcquire(reserved);
		at(berlin("2026-01-16T00:00:01"));
		this.store.settle(reserved, decided, new long[] { 7 });
		expect(acquire(limit, 7), true, 0, 0, 24 * HOUR - SECOND);
		assertThat(acquire(limit, 1).allowed()).isFalse();
	}

	@Test
	void settleOfAMissingBucketChargesAFreshOne() {
		RateLimit limit = RateLimit.of("settle-reset", Algorithm.TOKEN_BUCKET, 10, Duration.ofHours(1));
		List<Acquisition> reserved = List.of(new Acquisition(limit, "alice", 5));
		RateLimitResult decided = this.store.tryAcquire(reserved);
		this.store.reset(limit, "alice");
		this.store.settle(reserved, decided, new long[] { 12 });
		// what was used beyond the reservation is charged, though the bucket was forgotten
		assertThat(this.store.inspect(limit, "alice").remaining()).isEqualTo(3);
	}

	@Test
	void settleRefusesWhatCannotBeSettled() {
		RateLimit exports = RateLimit.of("settle-exports", Algorithm.CONCURRENCY, 2, Duration.ofMinutes(1));
		List<Acquisition> inFlight = List.of(new Acquisition(exports, "acme", 1));
		RateLimitResult held = this.store.tryAcquire(inFlight);
		assertThatIllegalArgumentException().isThrownBy(() -> this.store.settle(inFlight, held, new long[] { 1 }))
			.withMessageContaining("settle-exports")
			.withMessageContaining("calls in flight");
		RateLimit limit = RateLimit.of("settle-args", Algorithm.TOKEN_BUCKET, 10, Duration.ofHours(1));
		List<Acquisition> reserved = List.of(new Acquisition(limit, "alice", 2));
		RateLimitResult decided = this.store.tryAcquire(reserved);
		assertThatIllegalArgumentException().isThrownBy(() -> this.store.settle(reserved, decided, new long[] { -1 }))
			.withMessageContaining("negative");
		assertThatIllegalArgumentException().isThrownBy(() -> this.store.settle(reserved, decided, new long[] { 1, 2 }))
			.withMessageContaining("one actual cost per acquisition");
		// nothing was settled
		assertThat(this.store.inspect(limit, "alice").remaining()).isEqualTo(8);
		assertThat(acquireAll(new Acquisition(exports, "acme", 1)).decisions().get(0).remaining()).isZero();
	}

	@Test
	void settleAsyncSettlesAsSettleDoes() throws Exception {
		RateLimit limit = RateLimit.of("settle-async", Algorithm.FIXED_WINDOW, 10, Duration.ofHours(1));
		List<Acquisition> reserved = List.of(new Acquisition(limit, "alice", 5));
		RateLimitResult decided = this.store.tryAcquire(reserved);
		this.store.settleAsync(reserved, decided, new long[] { 12 }).toCompletableFuture().get(60, TimeUnit.SECONDS);
		assertThat(this.store.inspect(limit, "alice").remaining()).isZero();
		assertThat(acquire(limit, 1).allowed()).isFalse();
	}

	@ParameterizedTest
	@EnumSource(value = Algorithm.class, names = "CONCURRENCY", mode = EnumSource.Mode.EXCLUDE)
	void concurrentReservationsSettledAtRandomCostsChargeExactlyTheirSum(Algorithm algorithm) throws Exception {
		// the clock stands still: what is used up is exactly what was settled
		RateLimit limit = RateLimit.of("settle-hot", algorithm, 1_000_000, Duration.ofHours(1));
		long[] used = settledConcurrently(List.of(new Acquisition(limit, "hot", SETTLE_ESTIMATE)));
		assertThat(this.store.inspect(limit, "hot").remaining()).as("remaining after %d units settled", used[0])
			.isEqualTo(limit.capacity() - used[0]);
	}

	@Test
	void concurrentSettlementsOfTwoLimitsChargeEachExactlyItsSum() throws Exception {
		RateLimit tokens = RateLimit.of("settle-tokens", Algorithm.TOKEN_BUCKET, 1_000_000, Duration.ofHours(1));
		RateLimit log = RateLimit.of("settle-log", Algorithm.SLIDING_WINDOW_LOG, 1_000_000, Duration.ofHours(1));
		// in one order here, in the other there: settling them must not deadlock either
		long[] used = settledConcurrently(List.of(new Acquisition(tokens, "hot", SETTLE_ESTIMATE),
				new Acquisition(log, "hot", SETTLE_ESTIMATE)));
		assertThat(this.store.inspect(tokens, "hot").remaining()).isEqualTo(tokens.capacity() - used[0]);
		assertThat(this.store.inspect(log, "hot").remaining()).isEqualTo(log.capacity() - used[1]);
	}

	/**
	 * Reserves {@code reserved} from {@link #CALLERS} threads at once, each
	 * {@link #SETTLES_PER_CALLER} times, settling each reservation at random actual costs
	 * (the odd thread asks for the acquisitions in reverse order); answers the sum of the
	 * actual costs settled for each acquisition.
	 */
	private long[] settledConcurrently(List<Acquisition> reserved) throws Exception {
		ExecutorService callers = Executors.newFixedThreadPool(CALLERS);
		try {
			CountDownLatch start = new CountDownLatch(1);
			List<Future<long[]>> used = new ArrayList<>();
			for (int t = 0; t < CALLERS; t++) {
				SplittableRandom random = new SplittableRandom(t);
				boolean reversed = t % 2 == 1;
				List<Acquisition> asked = new ArrayList<>(reserved);
				if (reversed) {
					Collections.reverse(asked);
				}
				used.add(callers.submit(() -> {
					start.await();
					long[] sums = new long[asked.size()];
					for (int i = 0; i < SETTLES_PER_CALLER; i++) {
						RateLimitResult decided = this.store.tryAcquire(asked);
						assertThat(decided.allowed()).isTrue();
						long[] actual = new long[asked.size()];
						for (int j = 0; j < actual.length; j++) {
							actual[j] = random.nextLong(3 * SETTLE_ESTIMATE + 1);
							sums[reversed ? actual.length - 1 - j : j] += actual[j];
						}
						this.store.settle(asked, decided, actual);
					}
					return sums;
				}));
			}
			start.countDown();
			long[] total = new long[reserved.size()];
			for (Future<long[]> callerUsed : used) {
				long[] sums = callerUsed.get(60, TimeUnit.SECONDS);
				for (int j = 0; j < total.length; j++) {
					total[j] += sums[j];
				}
			}
			return total;
		}
		finally {
			callers.shutdownNow();
		}
	}

	private static long resetOnceFiveOfFiveAreTaken(Algorithm algorithm) {
		return switch (algorithm) {
			// one of the five 200ms tokens comes back
			case TOKEN_BUCKET, LEAKY_BUCKET -> 200_000;
			case FIXED_WINDOW, SLIDING_WINDOW_LOG -> SECOND;
			// the requests decay through the next window at one per 200ms
			case SLIDING_WINDOW_COUNTER -> SECOND + 200_000;
			// calls in flight have no time at which they are over
			case CONCURRENCY -> 0;
		};
	}

	/**
	 * Sends {@code request} from {@link #CALLERS} threads at once, each trying
	 * {@link #ATTEMPTS_PER_CALLER} times, and counts the admitted ones.
	 */
	private int admittedConcurrently(List<Acquisition> request) throws Exception {
		ExecutorService callers = Executors.newFixedThreadPool(CALLERS);
		try {
			CountDownLatch start = new CountDownLatch(1);
			List<Future<Integer>> admitted = new ArrayList<>();
			for (int t = 0; t < CALLERS; t++) {
				admitted.add(callers.submit(() -> {
					start.await();
					int count = 0;
					for (int i = 0; i < ATTEMPTS_PER_CALLER; i++) {
						if (this.store.tryAcquire(request).allowed()) {
							count++;
						}
					}
					return count;
				}));
			}
			start.countDown();
			int total = 0;
			for (Future<Integer> callerAdmitted : admitted) {
				total += callerAdmitted.get(60, TimeUnit.SECONDS);
			}
			return total;
		}
		finally {
			callers.shutdownNow();
		}
	}

	private RateLimitDecision acquire(RateLimit limit, long cost) {
		return acquireAll(new Acquisition(limit, "alice", cost)).decisions().get(0);
	}

	private RateLimitDecision reserve(RateLimit limit, long maxDelayMicros) {
		RateLimitResult result = this.store.tryAcquire(List.of(new Acquisition(limit, "alice", 1)), maxDelayMicros);
		assertThat(result.decisions()).hasSize(1);
		return result.decisions().get(0);
	}

	/** An admitted reservation: nothing left, the given wait, and quota back one interval after the slot. */
	private static void expectReserved(RateLimitDecision decision, long delayMicros, long resetMicros) {
		expect(decision, true, 0, 0, resetMicros);
		assertThat(decision.delayMicros()).as("delay").isEqualTo(delayMicros);
	}

	private RateLimitResult acquireAll(Acquisition... acquisitions) {
		RateLimitResult result = this.store.tryAcquire(List.of(acquisitions));
		assertThat(result.decisions()).hasSize(acquisitions.length);
		return result;
	}

	private void at(long micros) {
		this.clock.set(micros);
	}

	/** An instant given as local date and time in Berlin. */
	private static long berlin(String localDateTime) {
		return TimeUnit.SECONDS.toMicros(LocalDateTime.parse(localDateTime).atZone(BERLIN).toEpochSecond());
	}

	private static void expect(RateLimitDecision decision, boolean allowed, long remaining, long retryAfterMicros,
			long resetMicros) {
		assertThat(decision.allowed()).as("allowed").isEqualTo(allowed);
		assertThat(decision.remaining()).as("remaining").isEqualTo(remaining);
		assertThat(decision.retryAfterMicros()).as("retry-after").isEqualTo(retryAfterMicros);
		assertThat(decision.resetMicros()).as("reset").isEqualTo(resetMicros);
	}

}
