package io.github.ratelimit.internal.local;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.Test;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.FailMode;
import io.github.ratelimit.internal.core.CircuitBreaker;
import io.github.ratelimit.internal.core.FailoverRateLimitStore;
import io.github.ratelimit.internal.core.FailoverSettings;
import io.github.ratelimit.internal.core.ShareGrant;
import io.github.ratelimit.internal.core.ShareRequest;
import io.github.ratelimit.internal.core.ShareStore;
import io.github.ratelimit.internal.core.ThrottledLog;
import io.github.ratelimit.internal.memory.InMemoryRateLimitStore;
import io.github.ratelimit.store.Acquisition;
import io.github.ratelimit.store.MutableDecision;
import io.github.ratelimit.store.RateLimit;
import io.github.ratelimit.store.RateLimitResult;
import io.github.ratelimit.store.RateLimitStore;
import io.github.ratelimit.store.contract.MutableClock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

/**
 * Local-first decisions against shares of a shared store, on a clock the test moves: the
 * shared store is the in-memory store, leased through {@link ShareStore#over}, and every
 * call to it is counted.
 */
class LocalFirstRateLimitStoreTests {

	private static final long MS = 1_000;

	private static final Duration SYNC = Duration.ofMillis(10);

	private final MutableClock clock = new MutableClock();

	private final InMemoryRateLimitStore sharedBuckets = new InMemoryRateLimitStore(this.clock, 10_000);

	private final AtomicInteger sharedCalls = new AtomicInteger();

	private final AtomicBoolean sharedDown = new AtomicBoolean();

	private final RateLimitStore shared = new CountingStore();

	private final ShareStore sharing = (leases) -> {
		call();
		return ShareStore.over(this.sharedBuckets, this.clock).grant(leases);
	};

	private final List<String> warnings = new CopyOnWriteArrayList<>();

	@Test
	void decidesFromItsShareWithoutAskingTheSharedStore() {
		LocalFirstRateLimitStore store = store(Set.of(), 100);
		RateLimit limit = RateLimit.of("search", Algorithm.TOKEN_BUCKET, 1_000, Duration.ofSeconds(1));
		assertThat(admitted(store, limit, "a", 50)).isEqualTo(50);
		// the share grows with the demand: a few calls for the first 50 requests
		assertThat(this.sharedCalls.get()).isBetween(1, 8);
		this.clock.advance(SYNC);
		store.sync().join();
		int afterSync = this.sharedCalls.get();
		assertThat(admitted(store, limit, "a", 50)).isEqualTo(50);
		assertThat(this.sharedCalls.get()).isEqualTo(afterSync);
	}

	@Test
	void decidesInPlaceWithoutAllocatingAListWhenTheShareCoversTheCost() {
		LocalFirstRateLimitStore store = store(Set.of(), 100);
		RateLimit limit = RateLimit.of("search", Algorithm.TOKEN_BUCKET, 1_000, Duration.ofSeconds(1));
		admitted(store, limit, "a", 20);
		this.clock.advance(SYNC);
		store.sync().join();
		int calls = this.sharedCalls.get();
		MutableDecision decision = new MutableDecision();
		for (int i = 0; i < 20; i++) {
			assertThat(store.tryAcquire(limit, "a", 1, 0, decision)).isTrue();
			assertThat(decision.allowed()).isTrue();
			assertThat(decision.remaining()).isPositive();
			// decided in memory, and reported so: not as the shared store's decision
			assertThat(decision.store()).isEqualTo(RateLimitResult.LOCAL);
		}
		assertThat(this.sharedCalls.get()).isEqualTo(calls);
	}

	@Test
	void instancesTogetherNeverAdmitMoreThanTheBucketHad() {
		// 4 instances, each asked 1,000 times a second, against 50 a second with a burst of 50
		RateLimit limit = RateLimit.of("login", Algorithm.TOKEN_BUCKET, 50, Duration.ofSeconds(1));
		Fleet fleet = new Fleet(4, 1);
		fleet.run(limit, 2_000);
		long allowance = 50 + 50 * 2;
		assertThat(fleet.admitted).isLessThanOrEqualTo(allowance);
		// what shares hold back at the end is at most a few intervals of refill
		assertThat(fleet.admitted).isGreaterThanOrEqualTo(allowance - 10);
	}

	@Test
	void sharedStoreCallsDependOnTheSyncRateNotOnTheRequestRate() {
		RateLimit limit = RateLimit.of("api", Algorithm.TOKEN_BUCKET, 100_000, Duration.ofSeconds(1));
		Fleet slow = new Fleet(4, 1);
		slow.run(limit, 1_000);
		int slowCalls = this.sharedCalls.getAndSet(0);
		this.sharedBuckets.resetAll();
		Fleet fast = new Fleet(4, 8);
		fast.run(limit, 1_000);
		int fastCalls = this.sharedCalls.get();
		assertThat(fast.admitted).isEqualTo(8 * slow.admitted);
		// 4 instances x 100 syncs a second, plus the first few calls while shares grow
		assertThat(slowCalls).isBetween(300, 460);
		assertThat(fastCalls).isBetween(300, 460);
	}

	@Test
	void windowSharesLapseWhenTheirWindowEnds() {
		RateLimit limit = RateLimit.of("daily-ish", Algorithm.FIXED_WINDOW, 20, Duration.ofMillis(100));
		Fleet fleet = new Fleet(4, 1);
		fleet.run(limit, 1_000);
		assertThat(fleet.perWindow(100)).allSatisfy((count) -> assertThat(count).isLessThanOrEqualTo(20));
		assertThat(fleet.admitted).isLessThanOrEqualTo(20 * 10).isGreaterThanOrEqualTo(20 * 10 - 40);
	}

	@Test
	void slidingWindowCounterSharesStayWithinTheLimit() {
		RateLimit limit = RateLimit.of("swc", Algorithm.SLIDING_WINDOW_COUNTER, 30, Duration.ofMillis(200));
		Fleet fleet = new Fleet(4, 1);
		fleet.run(limit, 1_000);
		// at most the capacity in each window, the counter's weighting allowing no more
		assertThat(fleet.perWindow(200)).allSatisfy((count) -> assertThat(count).isLessThanOrEqualTo(30));
	}

	@Test
	void rejectsHereWhileAnEmptyShareWaitsForTheNextSync() {
		LocalFirstRateLimitStore store = store(Set.of(), 100);
		RateLimit limit = RateLimit.of("tight", Algorithm.TOKEN_BUCKET, 2, Duration.ofHours(1));
		assertThat(admitted(store, limit, "a", 2)).isEqualTo(2);
		// the second request asked for more than its cost and came back short: the share
		// waits for the next sync already
		RateLimitResult first = acquire(store, limit, "a");
		assertThat(first.allowed()).isFalse();
		int calls = this.sharedCalls.get();
		for (int i = 0; i < 100; i++) {
			RateLimitResult again = acquire(store, limit, "a");
			assertThat(again.allowed()).isFalse();
			assertThat(again.decisions().get(0).retryAfterMicros()).isPositive();
		}
		MutableDecision inPlace = new MutableDecision();
		assertThat(store.tryAcquire(limit, "a", 1, 0, inPlace)).isFalse();
		assertThat(inPlace.rejects()).isTrue();
		assertThat(inPlace.retryAfterMicros()).isPositive();
		assertThat(this.sharedCalls.get()).isEqualTo(calls);
		this.clock.advance(SYNC);
		store.sync().join();
		assertThat(this.sharedCalls.get()).isEqualTo(calls + 1);
	}

	@Test
	void aColdBucketCostsNoMoreCallsThanTheExactMode() {
		LocalFirstRateLimitStore store = store(Set.of(), 100);
		RateLimit limit = RateLimit.of("per-user", Algorithm.TOKEN_BUCKET, 1_000, Duration.ofSeconds(1));
		// one request every three sync intervals: each is a call, as in the exact mode, and
		// no sync adds one
		for (int i = 0; i < 30; i++) {
			assertThat(acquire(store, limit, "a")).as("request %d", i).matches(RateLimitResult::allowed);
			for (int s = 0; s < 3; s++) {
				this.clock.advance(SYNC);
				store.sync().join();
			}
		}
		assertThat(this.sharedCalls.get()).isEqualTo(30);
		// and nothing is left held: the bucket has refilled
		assertThat(this.sharedBuckets.inspect(limit, "a").remaining()).isEqualTo(1_000);
	}

	@Test
	void limitsThatCannotBeLeasedOrAreWantedExactAskTheSharedStoreEveryTime() {
		LocalFirstRateLimitStore store = store(Set.of("exact"), 100);
		List<RateLimit> limits = List.of(
				RateLimit.of("exact", Algorithm.TOKEN_BUCKET, 1_000, Duration.ofSeconds(1)),
				RateLimit.of("smooth", Algorithm.LEAKY_BUCKET, 1_000, Duration.ofSeconds(1)),
				RateLimit.of("log", Algorithm.SLIDING_WINDOW_LOG, 1_000, Duration.ofSeconds(1)),
				RateLimit.of("in-flight", Algorithm.CONCURRENCY, 1_000, Duration.ofMinutes(1)),
				new RateLimit("trial", Algorithm.TOKEN_BUCKET, 1_000, 1_000, Duration.ofSeconds(1), FailMode.OPEN,
						true));
		for (RateLimit limit : limits) {
			int before = this.sharedCalls.get();
			assertThat(admitted(store, limit, "a", 10)).isEqualTo(10);
			assertThat(this.sharedCalls.get()).as(limit.name()).isEqualTo(before + 10);
		}
		RateLimit shareable = RateLimit.of("reserving", Algorithm.TOKEN_BUCKET, 1_000, Duration.ofSeconds(1));
		int before = this.sharedCalls.get();
		for (int i = 0; i < 10; i++) {
			store.tryAcquire(List.of(new Acquisition(shareable, "a", 1)), 1_000);
		}
		assertThat(this.sharedCalls.get()).isEqualTo(before + 10);
		assertThat(store.status().buckets()).anySatisfy((buckets) -> {
			assertThat(buckets.store()).isEqualTo("local-first shares");
			assertThat(buckets.count()).isZero();
		});
	}

	@Test
	void idleSharesAreGivenBackAndThenForgotten() {
		LocalFirstRateLimitStore store = store(Set.of(), 100);
		RateLimit limit = RateLimit.of("export", Algorithm.TOKEN_BUCKET, 100, Duration.ofHours(1));
		assertThat(admitted(store, limit, "a", 30)).isEqualTo(30);
		this.clock.advance(SYNC);
		store.sync().join();
		assertThat(this.sharedBuckets.inspect(limit, "a").remaining()).isLessThan(70);
		this.clock.advance(SYNC);
		store.sync().join();
		// idle for an interval: everything not spent is back in the shared bucket
		assertThat(this.sharedBuckets.inspect(limit, "a").remaining()).isEqualTo(70);
		assertThat(shareCount(store)).isEqualTo(1);
		this.clock.advance(SYNC);
		store.sync().join();
		assertThat(shareCount(store)).isZero();
	}

	@Test
	void closingGivesEveryShareBack() {
		LocalFirstRateLimitStore store = store(Set.of(), 100);
		RateLimit limit = RateLimit.of("export", Algorithm.TOKEN_BUCKET, 100, Duration.ofHours(1));
		assertThat(admitted(store, limit, "a", 30)).isEqualTo(30);
		this.clock.advance(SYNC);
		store.sync().join();
		store.close();
		assertThat(this.sharedBuckets.inspect(limit, "a").remaining()).isEqualTo(70);
		assertThat(shareCount(store)).isZero();
	}

	@Test
	void aRefundGoesBackIntoTheShare() {
		LocalFirstRateLimitStore store = store(Set.of(), 100);
		RateLimit limit = RateLimit.of("refunded", Algorithm.TOKEN_BUCKET, 10, Duration.ofHours(1));
		List<RateLimitResult> results = takeAll(store, limit, "a");
		assertThat(acquire(store, limit, "a").allowed()).isFalse();
		int calls = this.sharedCalls.get();
		store.refund(List.of(new Acquisition(limit, "a", 1)), results.get(9));
		assertThat(acquire(store, limit, "a").allowed()).isTrue();
		assertThat(this.sharedCalls.get()).isEqualTo(calls);
	}

	@Test
	void aRefundOfAnEarlierWindowDoesNotGoIntoTheShareOfTheNextOne() {
		LocalFirstRateLimitStore store = store(Set.of(), 100);
		RateLimit limit = RateLimit.of("windowed", Algorithm.FIXED_WINDOW, 10, Duration.ofMillis(100));
		List<RateLimitResult> first = takeAll(store, limit, "a");
		// the next window: its share takes what the shared bucket has for it
		this.clock.advance(Duration.ofMillis(100));
		store.sync().join();
		int admitted = admitted(store, limit, "a", 10);
		assertThat(admitted).isEqualTo(10);
		// a request of the first window ends now and is refunded: its unit was counted there
		store.refund(List.of(new Acquisition(limit, "a", 1)), first.get(9));
		assertThat(admitted + admitted(store, limit, "a", 5)).isLessThanOrEqualTo(10);
	}

	@Test
	void aRefundAfterItsWindowEndedIsNotSpentInTheNextOne() {
		LocalFirstRateLimitStore store = store(Set.of(), 100);
		RateLimit limit = RateLimit.of("windowed", Algorithm.FIXED_WINDOW, 10, Duration.ofMillis(100));
		List<RateLimitResult> first = takeAll(store, limit, "a");
		this.clock.advance(Duration.ofMillis(50));
		store.sync().join();
		// the next window, the share idle since: its lapsed lease is dropped
		this.clock.advance(Duration.ofMillis(50));
		store.sync().join();
		// a request of the first window ends now and is refunded: its unit was counted there
		store.refund(List.of(new Acquisition(limit, "a", 1)), first.get(9));
		assertThat(admitted(store, limit, "a", 15)).isLessThanOrEqualTo(10);
	}

	@Test
	void aCostTakenFromALapsedWindowShareIsNotReturnedIntoTheNextWindow() {
		RateLimit windowed = RateLimit.of("windowed", Algorithm.FIXED_WINDOW, 10, Duration.ofMillis(100));
		RateLimit other = RateLimit.of("other", Algorithm.TOKEN_BUCKET, 10, Duration.ofHours(1));
		CompletableFuture<ShareGrant> pending = new CompletableFuture<>();
		ShareStore slowForOther = new ShareStore() {

			@Override
			public ShareGrant grant(List<ShareRequest> leases) {
				return LocalFirstRateLimitStoreTests.this.sharing.grant(leases);
			}

			@Override
			public CompletionStage<ShareGrant> grantAsync(List<ShareRequest> leases) {
				boolean slow = leases.stream().anyMatch((lease) -> lease.limit().equals(other));
				return slow ? pending : ShareStore.super.grantAsync(leases);
			}

		};
		LocalFirstRateLimitStore store = new LocalFirstRateLimitStore(this.shared, slowForOther, new LocalFirstSettings(this.clock, SYNC,
				(limit) -> false, 100, new ThrottledLog(0, System::nanoTime), this.warnings::add));
		// the share of the window takes one unit more than the first request
		assertThat(acquire(store, windowed, "a").allowed()).isTrue();
		// a request of both limits spends that unit here, and waits for the other limit
		CompletionStage<RateLimitResult> both = store.tryAcquireAsync(
				List.of(new Acquisition(windowed, "a", 1), new Acquisition(other, "b", 1)), 0);
		// the next window: the share is leased units of it
		this.clock.advance(Duration.ofMillis(100));
		store.sync().join();
		int admitted = admitted(store, windowed, "a", 1);
		// the other limit's store fails: the unit taken in the first window is not spent in this one
		pending.completeExceptionally(new IllegalStateException("shared store down"));
		assertThat(both.toCompletableFuture()).isCompletedExceptionally();
		assertThat(admitted + admitted(store, windowed, "a", 15)).isLessThanOrEqualTo(10);
	}

	@Test
	void bucketsBeyondTheBoundAreDecidedByTheSharedStore() {
		LocalFirstRateLimitStore store = store(Set.of(), 2);
		RateLimit limit = RateLimit.of("per-user", Algorithm.TOKEN_BUCKET, 1_000, Duration.ofSeconds(1));
		for (String identity : List.of("a", "b", "c", "d")) {
			assertThat(admitted(store, limit, identity, 5)).isEqualTo(5);
		}
		assertThat(shareCount(store)).isEqualTo(2);
		int calls = this.sharedCalls.get();
		admitted(store, limit, "c", 5);
		assertThat(this.sharedCalls.get()).isEqualTo(calls + 5);
	}

	@Test
	void aFailingSharedStoreFailsOnlyWhatItWasAskedAndSharesKeepDeciding() {
		LocalFirstRateLimitStore store = store(Set.of(), 100);
		RateLimit limit = RateLimit.of("search", Algorithm.TOKEN_BUCKET, 1_000, Duration.ofSeconds(1));
		admitted(store, limit, "a", 20);
		this.clock.advance(SYNC);
		store.sync().join();
		this.sharedDown.set(true);
		// the share still covers what it held
		assertThat(admitted(store, limit, "a", 20)).isEqualTo(20);
		this.clock.advance(SYNC);
		store.sync().join();
		assertThat(this.warnings).anySatisfy((warning) -> assertThat(warning).contains("share sync failed"));
		// a bucket without a share fails, for the failover store to decide with its fallback
		assertThatIllegalStateException().isThrownBy(() -> acquire(store, limit, "b"));
		FailoverRateLimitStore failover = new FailoverRateLimitStore(store,
				new InMemoryRateLimitStore(this.clock, 1_000), new FailoverSettings(0.5, new CircuitBreaker(5, 1_000_000_000L),
				new ThrottledLog(0, System::nanoTime), new ThrottledLog(0, System::nanoTime), this.warnings::add,
				this.warnings::add));
		RateLimitResult fallback = failover.tryAcquire(List.of(new Acquisition(limit, "b", 1)));
		assertThat(fallback.allowed()).isTrue();
		assertThat(fallback.store()).isEqualTo(RateLimitResult.FALLBACK);
	}

	private LocalFirstRateLimitStore store(Set<String> exact, int maxShares) {
		return new LocalFirstRateLimitStore(this.shared, this.sharing, new LocalFirstSettings(this.clock, SYNC,
				(limit) -> exact.contains(limit.name()), maxShares, new ThrottledLog(0, System::nanoTime),
				this.warnings::add));
	}

	private void call() {
		this.sharedCalls.incrementAndGet();
		if (this.sharedDown.get()) {
			throw new IllegalStateException("shared store down");
		}
	}

	private static long shareCount(LocalFirstRateLimitStore store) {
		return store.status()
			.buckets()
			.stream()
			.filter((buckets) -> buckets.store().equals("local-first shares"))
			.findFirst()
			.orElseThrow()
			.count();
	}

	/** Takes a limit's whole capacity for an identity, one unit a request, each admitted. */
	private List<RateLimitResult> takeAll(LocalFirstRateLimitStore store, RateLimit limit, String identity) {
		List<RateLimitResult> results = new ArrayList<>();
		for (long i = 0; i < limit.capacity(); i++) {
			results.add(acquire(store, limit, identity));
		}
		assertThat(results).allMatch(RateLimitResult::allowed);
		return results;
	}

	private static int admitted(RateLimitStore store, RateLimit limit, String identity, int requests) {
		int admitted = 0;
		for (int i = 0; i < requests; i++) {
			if (acquire(store, limit, identity).allowed()) {
				admitted++;
			}
		}
		return admitted;
	}

	private static RateLimitResult acquire(RateLimitStore store, RateLimit limit, String identity) {
		return store.tryAcquire(List.of(new Acquisition(limit, identity, 1)));
	}

	/**
	 * Instances sharing the shared store, each asked {@code perMillisecond} times every
	 * millisecond for one bucket, each syncing every interval at its own phase.
	 */
	private final class Fleet {

		private final List<LocalFirstRateLimitStore> instances = new ArrayList<>();

		private final int perMillisecond;

		private final List<Long> admittedAt = new ArrayList<>();

		long admitted;

		Fleet(int size, int perMillisecond) {
			for (int i = 0; i < size; i++) {
				this.instances.add(store(Set.of(), 100));
			}
			this.perMillisecond = perMillisecond;
		}

		void run(RateLimit limit, int milliseconds) {
			long start = LocalFirstRateLimitStoreTests.this.clock.nowMicros();
			for (int ms = 0; ms < milliseconds; ms++) {
				LocalFirstRateLimitStoreTests.this.clock.set(start + ms * MS);
				for (int i = 0; i < this.instances.size(); i++) {
					LocalFirstRateLimitStore instance = this.instances.get(i);
					if ((ms + i * 10 / this.instances.size()) % 10 == 0) {
						instance.sync().join();
					}
					for (int r = 0; r < this.perMillisecond; r++) {
						if (acquire(instance, limit, "shared-identity").allowed()) {
							this.admitted++;
							this.admittedAt.add((long) ms);
						}
					}
				}
			}
		}

		List<Long> perWindow(int windowMillis) {
			List<Long> counts = new ArrayList<>();
			for (long at : this.admittedAt) {
				int window = (int) (at / windowMillis);
				while (counts.size() <= window) {
					counts.add(0L);
				}
				counts.set(window, counts.get(window) + 1);
			}
			return counts;
		}

	}

	/** The shared store, counting every call. */
	private final class CountingStore implements RateLimitStore {

		@Override
		public RateLimitResult tryAcquire(List<Acquisition> acquisitions, long maxDelayMicros) {
			call();
			return LocalFirstRateLimitStoreTests.this.sharedBuckets.tryAcquire(acquisitions, maxDelayMicros);
		}

		@Override
		public void refund(List<Acquisition> acquisitions, RateLimitResult decided) {
			LocalFirstRateLimitStoreTests.this.sharedBuckets.refund(acquisitions, decided);
		}

		@Override
		public String name() {
			return RateLimitResult.REDIS;
		}

	}

}
