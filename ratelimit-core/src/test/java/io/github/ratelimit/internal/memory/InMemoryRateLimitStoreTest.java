package io.github.ratelimit.internal.memory;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.IntStream;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.EnumSource;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.FailMode;
import io.github.ratelimit.internal.core.RateLimitClock;
import io.github.ratelimit.store.Acquisition;
import io.github.ratelimit.store.MutableDecision;
import io.github.ratelimit.store.RateLimit;
import io.github.ratelimit.store.RateLimitDecision;
import io.github.ratelimit.store.RateLimitResult;
import io.github.ratelimit.store.RateLimitStore;
import io.github.ratelimit.store.contract.MutableClock;
import io.github.ratelimit.store.contract.RateLimitStoreContractTests;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

class InMemoryRateLimitStoreTest extends RateLimitStoreContractTests {

	private static final int THREADS = 8;

	private static final int ATTEMPTS_PER_THREAD = 250;

	@Override
	protected RateLimitStore createStore(MutableClock clock) {
		return new InMemoryRateLimitStore(clock, InMemoryRateLimitStore.DEFAULT_MAXIMUM_KEYS);
	}

	@Test
	void rejectsANonPositiveKeyBound() {
		assertThatIllegalArgumentException().isThrownBy(() -> new InMemoryRateLimitStore(new MutableClock(), 0))
			.withMessage("maximumKeys must be positive: 0");
	}

	@Test
	void keepsNoMoreBucketsThanItsBound() {
		InMemoryRateLimitStore store = new InMemoryRateLimitStore(clock(), 50);
		RateLimit limit = RateLimit.of("orders", Algorithm.TOKEN_BUCKET, 5, Duration.ofHours(1));
		for (int i = 0; i < 2_000; i++) {
			assertThat(acquire(store, limit, "client-" + i, 1).allowed()).isTrue();
			assertThat(store.size()).isLessThanOrEqualTo(50);
		}
		assertThat(store.size()).isPositive();
	}

	@ParameterizedTest
	@EnumSource(Algorithm.class)
	void keepsABucketWhileItsStateMatters(Algorithm algorithm) {
		InMemoryRateLimitStore store = new InMemoryRateLimitStore(clock(), 100);
		RateLimit limit = RateLimit.of("orders", algorithm, 5, Duration.ofSeconds(1));
		acquire(store, limit, "alice", 5);
		clock().advanceMicros(limit.idleTtlMicros() - 1);
		assertThat(store.size()).isEqualTo(1);
	}

	@ParameterizedTest
	@CsvSource({ "TOKEN_BUCKET, 60000000", "LEAKY_BUCKET, 60000000", "FIXED_WINDOW, 60000000",
			"SLIDING_WINDOW_LOG, 60000500", "SLIDING_WINDOW_COUNTER, 120000000" })
	void keepsABucketUntilItsQuotaIsWholeAgain(Algorithm algorithm, long wholeAfterMicros) {
		InMemoryRateLimitStore store = new InMemoryRateLimitStore(clock(), 100);
		RateLimit limit = RateLimit.of("orders", algorithm, 5, Duration.ofMinutes(1));
		acquire(store, limit, "alice", 1);
		clock().advanceMicros(500);
		acquire(store, limit, "alice", 4);
		// a token every 12s, windows of a minute: whole again when the last unit is back
		clock().set(T0 + wholeAfterMicros - 1);
		assertThat(store.size()).isEqualTo(1);
		assertThat(store.inspect(limit, "alice").remaining()).isLessThan(5);
		clock().set(T0 + wholeAfterMicros);
		assertThat(store.size()).isZero();
	}

	@ParameterizedTest
	@EnumSource(Algorithm.class)
	void createsNoBucketForALimitThatARejectedRequestDidNotCharge(Algorithm algorithm) {
		InMemoryRateLimitStore store = new InMemoryRateLimitStore(clock(), 100);
		RateLimit perIp = RateLimit.of("login-ip", Algorithm.TOKEN_BUCKET, 1, Duration.ofMinutes(1));
		RateLimit perUser = RateLimit.of("login-username", algorithm, 5, Duration.ofMinutes(1));
		assertThat(store.tryAcquire(List.of(new Acquisition(perIp, "ip:1", 1), new Acquisition(perUser, "erin", 1)))
			.allowed()).isTrue();
		assertThat(store.size()).isEqualTo(2);
		for (int i = 0; i < 100; i++) {
			RateLimitResult rejected = store
				.tryAcquire(List.of(new Acquisition(perUser, "user-" + i, 1), new Acquisition(perIp, "ip:1", 1)));
			assertThat(rejected.allowed()).isFalse();
			assertThat(rejected.decisions().get(0).remaining()).as("a fresh bucket, uncharged").isEqualTo(5);
		}
		assertThat(store.size()).as("buckets kept").isEqualTo(2);
		assertThat(store.inspect(perUser, "user-7").exists()).isFalse();
	}

	@Test
	void whenFullForgetsTheBucketsWithMostQuotaLeftFirst() {
		// a bound below 8 forgets one bucket at a time
		InMemoryRateLimitStore store = new InMemoryRateLimitStore(clock(), 4);
		RateLimit limit = RateLimit.of("orders", Algorithm.TOKEN_BUCKET, 8, Duration.ofHours(1));
		acquire(store, limit, "used-up", 8);
		acquire(store, limit, "six-used", 6);
		acquire(store, limit, "four-used", 4);
		acquire(store, limit, "two-used", 2);
		acquire(store, limit, "one-used", 1);
		assertThat(store.size()).isEqualTo(4);
		assertThat(store.inspect(limit, "one-used").exists()).as("the newest, and the least used").isFalse();
		acquire(store, limit, "seven-used", 7);
		assertThat(store.inspect(limit, "two-used").exists()).isFalse();
		acquire(store, limit, "eight-used", 8);
		assertThat(store.inspect(limit, "four-used").exists()).isFalse();
		assertThat(store.inspect(limit, "used-up").remaining()).isZero();
		assertThat(store.inspect(limit, "six-used").remaining()).isEqualTo(2);
		assertThat(store.inspect(limit, "seven-used").remaining()).isEqualTo(1);
		assertThat(store.inspect(limit, "eight-used").remaining()).isZero();
	}

	@Test
	void forgetsAUsedUpBucketOnlyWhenEveryBucketKeptIsUsedUpAndThenTheOneRefillingSoonest() {
		InMemoryRateLimitStore store = new InMemoryRateLimitStore(clock(), 3);
		RateLimit minute = RateLimit.of("per-minute", Algorithm.FIXED_WINDOW, 2, Duration.ofMinutes(1));
		RateLimit hour = RateLimit.of("per-hour", Algorithm.FIXED_WINDOW, 2, Duration.ofHours(1));
		clock().advance(Duration.ofSeconds(30));
		acquire(store, hour, "alice", 2);
		acquire(store, minute, "alice", 2);
		acquire(store, hour, "bob", 1);
		acquire(store, minute, "bob", 1);
		assertThat(store.inspect(minute, "bob").exists()).as("half used like the hour's, but its window ends first")
			.isFalse();
		acquire(store, hour, "carol", 2);
		assertThat(store.inspect(hour, "bob").exists()).as("half used, the others used up").isFalse();
		acquire(store, hour, "dave", 2);
		assertThat(store.inspect(minute, "alice").exists()).as("all used up, the minute's refills first").isFalse();
		for (String identity : List.of("alice", "carol", "dave")) {
			assertThat(store.inspect(hour, identity).remaining()).isZero();
		}
	}

	@Test
	void dropsBucketsWhoseQuotaIsWholeBeforeForgettingAnyOther() {
		InMemoryRateLimitStore store = new InMemoryRateLimitStore(clock(), 2);
		RateLimit second = RateLimit.of("per-second", Algorithm.TOKEN_BUCKET, 2, Duration.ofSeconds(1));
		RateLimit hour = RateLimit.of("per-hour", Algorithm.TOKEN_BUCKET, 100, Duration.ofHours(1));
		acquire(store, second, "alice", 2);
		acquire(store, hour, "alice", 1);
		clock().advance(Duration.ofSeconds(2));
		acquire(store, hour, "bob", 1);
		assertThat(store.inspect(hour, "alice").exists()).as("1 of 100 used, kept").isTrue();
		assertThat(store.inspect(second, "alice").exists()).as("whole again, dropped").isFalse();
	}

	@Test
	void keepsEveryBucketWithinTheBoundAndSaysSo() {
		InMemoryRateLimitStore store = new InMemoryRateLimitStore(clock(), 1_000);
		RateLimit limit = RateLimit.of("orders", Algorithm.TOKEN_BUCKET, 5, Duration.ofHours(1));
		for (int i = 0; i < 1_000; i++) {
			acquire(store, limit, "client-" + i, 1);
		}
		assertThat(store.size()).isEqualTo(1_000);
		assertThat(store.status().buckets()).singleElement()
			.satisfies((kept) -> assertThat(kept.count()).isEqualTo(1_000))
			.satisfies((kept) -> assertThat(kept.maximum()).isEqualTo(1_000));
		for (int i = 0; i < 1_000; i++) {
			assertThat(store.inspect(limit, "client-" + i).remaining()).isEqualTo(4);
		}
	}

	@Test
	void keepsIdentitiesThatDifferOnlyBeyondAsciiApart() {
		InMemoryRateLimitStore store = new InMemoryRateLimitStore(clock(), 100);
		RateLimit limit = RateLimit.of("orders", Algorithm.FIXED_WINDOW, 2, Duration.ofMinutes(1));
		List<String> identities = List.of("user:jose", "user:jos\u00e9", "user:jos\u00c9", "user:jos\u00e9\u0301",
				"user:jo\u00e9s", "user:j\0se", "user:jose\0");
		for (String identity : identities) {
			assertThat(acquire(store, limit, identity, 2).allowed()).as(identity).isTrue();
		}
		for (String identity : identities) {
			assertThat(acquire(store, limit, identity, 1).allowed()).as(identity).isFalse();
		}
		assertThat(store.size()).isEqualTo(identities.size());
	}

	@Test
	void decidesInPlaceAsTheListDoes() {
		InMemoryRateLimitStore inPlace = new InMemoryRateLimitStore(clock(), 100);
		InMemoryRateLimitStore listed = new InMemoryRateLimitStore(clock(), 100);
		RateLimit limit = new RateLimit("orders", Algorithm.LEAKY_BUCKET, 3, 10, Duration.ofSeconds(1));
		MutableDecision decision = new MutableDecision();
		for (int i = 0; i < 6; i++) {
			boolean admitted = inPlace.tryAcquire(limit, "alice", 1, (i == 4) ? 500_000 : 0, decision);
			RateLimitResult result = listed.tryAcquire(List.of(new Acquisition(limit, "alice", 1)),
					(i == 4) ? 500_000 : 0);
			assertThat(admitted).isEqualTo(result.allowed());
			assertThat(decision.toResult()).isEqualTo(result);
			clock().advanceMicros(20_000);
		}
		assertThatIllegalArgumentException().isThrownBy(() -> inPlace.tryAcquire(limit, "alice", 4, 0, decision))
			.withMessage("cost 4 exceeds the capacity 3 of limit 'orders'");
	}

	@Test
	void slidingWindowLogRemembersTheLastOfRequestsCloseTogether() {
		InMemoryRateLimitStore store = new InMemoryRateLimitStore(clock(), 100);
		RateLimit limit = RateLimit.of("orders", Algorithm.SLIDING_WINDOW_LOG, 2, Duration.ofMinutes(1));
		acquire(store, limit, "alice", 1);
		clock().advanceMicros(500);
		acquire(store, limit, "alice", 1);
		// a period after the first: it has left, the second has 500µs to go
		clock().advanceMicros(limit.periodMicros() - 500);
		assertThat(acquire(store, limit, "alice", 1).allowed()).isTrue();
		assertThat(acquire(store, limit, "alice", 1).allowed()).isFalse();
	}

	@ParameterizedTest
	@EnumSource(Algorithm.class)
	void forgetsABucketOnceItsStateNoLongerMatters(Algorithm algorithm) {
		InMemoryRateLimitStore store = new InMemoryRateLimitStore(clock(), 100);
		RateLimit limit = RateLimit.of("orders", algorithm, 5, Duration.ofSeconds(1));
		acquire(store, limit, "alice", 5);
		// well past the idle time, so that the cache's timer wheel has moved on too
		clock().advance(Duration.ofMinutes(5));
		assertThat(store.size()).isZero();
		assertThat(acquire(store, limit, "alice", 5).allowed()).isTrue();
	}

	@Test
	void startsAfreshWhenALimitChangesAlgorithm() {
		InMemoryRateLimitStore store = new InMemoryRateLimitStore(clock(), 100);
		RateLimit tokens = RateLimit.of("orders", Algorithm.TOKEN_BUCKET, 2, Duration.ofSeconds(1));
		RateLimit window = RateLimit.of("orders", Algorithm.FIXED_WINDOW, 2, Duration.ofSeconds(1));
		assertThat(acquire(store, tokens, "alice", 2).allowed()).isTrue();
		assertThat(acquire(store, window, "alice", 2).allowed()).isTrue();
	}

	@Test
	void keepsCountsWhenARequestThatReadTheClockEarlierDecidesLast() {
		// an earlier reading of the clock reaches the bucket after a later one has been
		// decided, as when two threads race on one key across a window boundary
		long windowEnd = T0 + 1_000_000;
		RateLimit limit = RateLimit.of("orders", Algorithm.FIXED_WINDOW, 2, Duration.ofSeconds(1));
		MutableClock clock = new MutableClock(windowEnd - 1);
		AtomicBoolean armed = new AtomicBoolean();
		InMemoryRateLimitStore[] store = new InMemoryRateLimitStore[1];
		RateLimitClock racingClock = () -> {
			long now = clock.nowMicros();
			if (armed.compareAndSet(true, false)) {
				// while the first request holds its reading, a second one is decided
				clock.set(windowEnd);
				assertThat(acquire(store[0], limit, "alice", 2).allowed()).isTrue();
			}
			return now;
		};
		store[0] = new InMemoryRateLimitStore(racingClock, 100);
		armed.set(true);
		RateLimitResult late = acquire(store[0], limit, "alice", 1);
		assertThat(late.allowed()).isFalse();
		assertThat(late.timestampMicros()).isEqualTo(windowEnd);
		clock.set(windowEnd + 1);
		assertThat(acquire(store[0], limit, "alice", 1).allowed())
			.as("a third request in the window that admitted two").isFalse();
	}

	@ParameterizedTest
	@EnumSource(Algorithm.class)
	void concurrentRequestsOnOneKeyNeverOverAdmit(Algorithm algorithm) throws Exception {
		// the clock does not move, so exactly the capacity can be admitted
		InMemoryRateLimitStore store = new InMemoryRateLimitStore(new MutableClock(), 1_000);
		RateLimit limit = RateLimit.of("orders", algorithm, 1_000, Duration.ofMinutes(1));
		List<Integer> admitted = race((thread) -> {
			int count = 0;
			for (int i = 0; i < ATTEMPTS_PER_THREAD; i++) {
				if (acquire(store, limit, "alice", 1).allowed()) {
					count++;
				}
			}
			return count;
		});
		assertThat(admitted.stream().mapToInt(Integer::intValue).sum()).isEqualTo(1_000);
		assertThat(acquire(store, limit, "alice", 1).allowed()).isFalse();
	}

	@ParameterizedTest
	@EnumSource(Algorithm.class)
	void concurrentMultiLimitRequestsNeverOverAdmitEitherLimit(Algorithm algorithm) throws Exception {
		InMemoryRateLimitStore store = new InMemoryRateLimitStore(new MutableClock(), 1_000);
		// four users of 300 share a global 1000: the global limit runs out first
		RateLimit global = RateLimit.of("global", algorithm, 1_000, Duration.ofMinutes(1));
		RateLimit perUser = RateLimit.of("user", algorithm, 300, Duration.ofMinutes(1));
		List<Integer> admitted = race((thread) -> {
			String user = "user-" + (thread % 4);
			Acquisition globalAcquisition = new Acquisition(global, "everyone", 1);
			Acquisition userAcquisition = new Acquisition(perUser, user, 1);
			// half the threads list the limits in the other order: locks must not deadlock
			List<Acquisition> acquisitions = (thread % 2 == 0) ? List.of(globalAcquisition, userAcquisition)
					: List.of(userAcquisition, globalAcquisition);
			int count = 0;
			for (int i = 0; i < ATTEMPTS_PER_THREAD; i++) {
				RateLimitResult result = store.tryAcquire(acquisitions);
				assertThat(result.decisions()).hasSize(2);
				if (result.allowed()) {
					count++;
				}
			}
			return count;
		});
		assertThat(admitted.stream().mapToInt(Integer::intValue).sum()).isEqualTo(1_000);
		int[] perUserAdmitted = new int[4];
		for (int thread = 0; thread < THREADS; thread++) {
			perUserAdmitted[thread % 4] += admitted.get(thread);
		}
		assertThat(IntStream.of(perUserAdmitted).max().getAsInt()).isLessThanOrEqualTo(300);
		assertThat(acquire(store, global, "everyone", 1).allowed()).isFalse();
		for (int user = 0; user < 4; user++) {
			// a user limit lost exactly what the global one admitted for that user
			assertThat(available(store, perUser, "user-" + user)).isEqualTo(300 - perUserAdmitted[user]);
		}
	}

	@Test
	void requestsWithManyBucketsInAnyOrderAreDecidedWholeWithoutDeadlock() throws Exception {
		InMemoryRateLimitStore store = new InMemoryRateLimitStore(new MutableClock(), 10_000);
		RateLimit limit = RateLimit.of("wide", Algorithm.FIXED_WINDOW, 50, Duration.ofMinutes(1));
		// 200 buckets in one request, listed by each thread in an order of its own: the store
		// must lock them in one order of its own, or the threads wait on each other forever
		List<Acquisition> all = new ArrayList<>();
		for (int i = 0; i < 200; i++) {
			all.add(new Acquisition(limit, "id-" + i, 1));
		}
		List<Integer> admitted = race((thread) -> {
			List<Acquisition> mine = new ArrayList<>(all);
			Collections.shuffle(mine, new Random(thread));
			int count = 0;
			for (int i = 0; i < 20; i++) {
				if (store.tryAcquire(mine).allowed()) {
					count++;
				}
			}
			return count;
		});
		// all-or-nothing: every bucket gave exactly as many units as requests were admitted
		assertThat(admitted.stream().mapToInt(Integer::intValue).sum()).isEqualTo(50);
		for (Acquisition acquisition : all) {
			assertThat(acquire(store, limit, acquisition.identity(), 1).allowed()).isFalse();
		}
	}

	private static RateLimitResult acquire(RateLimitStore store, RateLimit limit, String identity, long cost) {
		return store.tryAcquire(List.of(new Acquisition(limit, identity, cost)));
	}

	/** Units a request could take now, as a cost-1 request sees them (and takes one). */
	private static long available(RateLimitStore store, RateLimit limit, String identity) {
		RateLimitDecision probe = acquire(store, limit, identity, 1).decisions().get(0);
		return probe.allowed() ? probe.remaining() + 1 : probe.remaining();
	}

	/** Runs {@code task} on {@link #THREADS} threads released together; returns their results in order. */
	private static <T> List<T> race(ThreadTask<T> task) throws Exception {
		ExecutorService executor = Executors.newFixedThreadPool(THREADS);
		try {
			CountDownLatch ready = new CountDownLatch(THREADS);
			CountDownLatch start = new CountDownLatch(1);
			List<Future<T>> futures = new ArrayList<>();
			for (int thread = 0; thread < THREADS; thread++) {
				int index = thread;
				Callable<T> callable = () -> {
					ready.countDown();
					start.await();
					return task.run(index);
				};
				futures.add(executor.submit(callable));
			}
			assertThat(ready.await(30, TimeUnit.SECONDS)).as("threads ready").isTrue();
			start.countDown();
			List<T> results = new ArrayList<>();
			for (Future<T> future : futures) {
				results.add(future.get(30, TimeUnit.SECONDS));
			}
			return results;
		}
		finally {
			executor.shutdownNow();
			assertThat(executor.awaitTermination(30, TimeUnit.SECONDS)).as("threads finished").isTrue();
		}
	}

	@FunctionalInterface
	private interface ThreadTask<T> {

		T run(int thread) throws Exception;

	}

}
