package io.github.ratelimit.internal.core;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import org.junit.jupiter.api.Test;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.FailMode;
import io.github.ratelimit.RateLimitUnavailableException;
import io.github.ratelimit.internal.memory.InMemoryRateLimitStore;
import io.github.ratelimit.store.Acquisition;
import io.github.ratelimit.store.BucketSnapshot;
import io.github.ratelimit.store.RateLimit;
import io.github.ratelimit.store.RateLimitResult;
import io.github.ratelimit.store.RateLimitStore;
import io.github.ratelimit.store.contract.MutableClock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

class FailoverRateLimitStoreTest {

	private static final int THRESHOLD = 3;

	private static final long PROBE_NANOS = 5_000_000_000L;

	private static final RateLimit OPEN = RateLimit.of("open", Algorithm.TOKEN_BUCKET, 10, Duration.ofHours(1));

	private static final RateLimit CLOSED = new RateLimit("login", Algorithm.TOKEN_BUCKET, 10, 10, Duration.ofHours(1),
			FailMode.CLOSED);

	private static final String RECOVERED = "Rate limit store recovered; decisions are back on it";

	private final MutableClock clock = new MutableClock();

	private final AtomicLong ticker = new AtomicLong(1_000);

	private final FlakyStore primary = new FlakyStore(new InMemoryRateLimitStore(this.clock, 1_000));

	private final InMemoryRateLimitStore fallback = new InMemoryRateLimitStore(this.clock, 1_000);

	private final List<String> warnings = new CopyOnWriteArrayList<>();

	private final List<String> infos = new CopyOnWriteArrayList<>();

	private final FailoverRateLimitStore store = failover(THRESHOLD);

	@Test
	void thePrimaryDecidesWhileItAnswers() {
		for (int i = 0; i < 12; i++) {
			RateLimitResult result = this.store.tryAcquire(acquire(OPEN, "alice"));
			assertThat(result.allowed()).isEqualTo(i < 10);
			assertThat(result.decisions().get(0).limit()).isEqualTo(OPEN);
		}
		assertThat(this.primary.calls).hasValue(12);
		assertThat(this.store.status().fallbackActive()).isFalse();
		assertThat(this.warnings).isEmpty();
		assertThat(this.infos).isEmpty();
	}

	@Test
	void failOpenLimitsAreDecidedByTheFallbackAtTheReducedShare() {
		this.primary.failing = true;
		int admitted = 0;
		for (int i = 0; i < 20; i++) {
			RateLimitResult result = this.store.tryAcquire(acquire(OPEN, "alice"));
			assertThat(result.decisions().get(0).limit().name()).isEqualTo("open");
			assertThat(result.decisions().get(0).limit().capacity()).as("capacity 10 at factor 0.5").isEqualTo(5);
			admitted += result.allowed() ? 1 : 0;
		}
		assertThat(admitted).isEqualTo(5);
		assertThat(this.store.status().fallbackActive()).isTrue();
	}

	@Test
	void asynchronousDecisionsFailOverLikeSynchronousOnes() {
		RateLimitResult decided = this.store.tryAcquireAsync(acquire(OPEN, "alice"), 0).toCompletableFuture().join();
		assertThat(decided.allowed()).isTrue();
		assertThat(this.primary.calls).hasValue(1);
		this.primary.failing = true;
		int admitted = 0;
		for (int i = 0; i < 20; i++) {
			RateLimitResult result = this.store.tryAcquireAsync(acquire(OPEN, "bob"), 0).toCompletableFuture().join();
			assertThat(result.store()).isEqualTo(RateLimitResult.FALLBACK);
			admitted += result.allowed() ? 1 : 0;
		}
		assertThat(admitted).as("capacity 10 at factor 0.5").isEqualTo(5);
		// the breaker opened after THRESHOLD failures: the rest never reached the primary
		assertThat(this.primary.calls).hasValue(1 + THRESHOLD);
		assertThat(this.store.status().circuitBreaker()).isEqualTo("OPEN");
	}

	@Test
	void asynchronousFailClosedDecisionFailsWithUnavailable() {
		this.primary.failing = true;
		assertThatExceptionOfType(CompletionException.class)
			.isThrownBy(() -> this.store.tryAcquireAsync(acquire(CLOSED, "alice"), 0).toCompletableFuture().join())
			.withCauseInstanceOf(RateLimitUnavailableException.class);
	}

	@Test
	void reservationsAreMadeByThePrimaryAndWhileItFailsByTheFallback() {
		// two tokens, one every 500ms; the fallback keeps one, one every second
		RateLimit limit = new RateLimit("sms", Algorithm.TOKEN_BUCKET, 2, 2, Duration.ofSeconds(1));
		List<Acquisition> one = acquire(limit, "alice");
		this.store.tryAcquire(one);
		this.store.tryAcquire(one);
		RateLimitResult reserved = this.store.tryAcquire(one, 2_000_000);
		assertThat(reserved.allowed()).isTrue();
		assertThat(reserved.delayMicros()).isEqualTo(500_000);
		assertThat(reserved.store()).isEqualTo(RateLimitResult.MEMORY);
		this.primary.failing = true;
		assertThat(this.store.tryAcquire(one, 2_000_000).delayMicros()).isZero();
		RateLimitResult fallbackReserved = this.store.tryAcquire(one, 2_000_000);
		assertThat(fallbackReserved.allowed()).isTrue();
		assertThat(fallbackReserved.delayMicros()).isEqualTo(1_000_000);
		assertThat(fallbackReserved.store()).isEqualTo(RateLimitResult.FALLBACK);
	}

	@Test
	void theFallbackKeepsEachIdentityApart() {
		this.primary.failing = true;
		for (String identity : List.of("alice", "bob")) {
			int admitted = 0;
			for (int i = 0; i < 8; i++) {
				admitted += this.store.tryAcquire(acquire(OPEN, identity)).allowed() ? 1 : 0;
			}
			assertThat(admitted).as(identity).isEqualTo(5);
		}
	}

	@Test
	void aCostAboveTheReducedCapacityIsStillAdmissible() {
		this.primary.failing = true;
		RateLimitResult result = this.store.tryAcquire(List.of(new Acquisition(OPEN, "alice", 8)));
		assertThat(result.allowed()).isTrue();
		assertThat(this.store.tryAcquire(acquire(OPEN, "alice")).allowed()).isFalse();
	}

	@Test
	void failClosedLimitsAnswerUnavailableNamingTheLimits() {
		this.primary.failing = true;
		assertThatExceptionOfType(RateLimitUnavailableException.class)
			.isThrownBy(() -> this.store.tryAcquire(List.of(new Acquisition(OPEN, "alice", 1),
					new Acquisition(CLOSED, "alice", 1), new Acquisition(CLOSED, "bob", 1))))
			.satisfies((ex) -> {
				assertThat(ex.getLimits()).containsExactly("login");
				assertThat(ex.getRetryAfter()).isPositive();
				assertThat(ex.getCause()).hasMessage("Redis is down");
			});
		// nothing was taken from the fail-open limit of the refused request
		int admitted = 0;
		for (int i = 0; i < 8; i++) {
			admitted += this.store.tryAcquire(acquire(OPEN, "alice")).allowed() ? 1 : 0;
		}
		assertThat(admitted).isEqualTo(5);
	}

	@Test
	void failClosedLimitsStayUnavailableWhileTheBreakerIsOpenAndSayWhenToRetry() {
		this.primary.failing = true;
		openBreaker();
		this.ticker.addAndGet(PROBE_NANOS - 2_000_000_000L);
		assertThatExceptionOfType(RateLimitUnavailableException.class)
			.isThrownBy(() -> this.store.tryAcquire(acquire(CLOSED, "alice")))
			.satisfies((ex) -> assertThat(ex.getRetryAfter()).isEqualTo(Duration.ofSeconds(2)));
		this.ticker.addAndGet(1_999_000_000L);
		assertThatExceptionOfType(RateLimitUnavailableException.class)
			.isThrownBy(() -> this.store.tryAcquire(acquire(CLOSED, "alice")))
			.satisfies((ex) -> assertThat(ex.getRetryAfter()).as("never less than a second")
				.isEqualTo(Duration.ofSeconds(1)));
		assertThat(this.primary.calls).hasValue(THRESHOLD);
	}

	@Test
	void theBreakerOpensAfterTheThresholdAndThePrimaryIsNotCalledAnyMore() {
		this.primary.failing = true;
		for (int i = 0; i < 50; i++) {
			this.store.tryAcquire(acquire(OPEN, "user-" + i));
		}
		assertThat(this.primary.calls).hasValue(THRESHOLD);
		assertThat(this.store.status().circuitBreaker()).isEqualTo("OPEN");
	}

	@Test
	void probesThePrimaryAfterTheOpenTimeAndReturnsDecisionsToItWhenItAnswers() {
		this.primary.failing = true;
		openBreaker();
		this.ticker.addAndGet(PROBE_NANOS - 1);
		this.store.tryAcquire(acquire(OPEN, "alice"));
		assertThat(this.primary.calls).as("no probe before the open time").hasValue(THRESHOLD);
		this.primary.failing = false;
		this.ticker.addAndGet(1);
		RateLimitResult probed = this.store.tryAcquire(acquire(OPEN, "alice"));
		assertThat(this.primary.calls).hasValue(THRESHOLD + 1);
		assertThat(probed.decisions().get(0).limit()).as("decided by the primary at the full quota").isEqualTo(OPEN);
		assertThat(this.store.status().fallbackActive()).isFalse();
		for (int i = 0; i < 5; i++) {
			assertThat(this.store.tryAcquire(acquire(OPEN, "alice")).decisions().get(0).limit().capacity())
				.isEqualTo(10);
		}
		assertThat(this.primary.calls).hasValue(THRESHOLD + 6);
		assertThat(this.infos).containsExactly(RECOVERED);
	}

	@Test
	void aFailedProbeKeepsTheFallbackDecidingForAnotherOpenTime() {
		this.primary.failing = true;
		openBreaker();
		this.ticker.addAndGet(PROBE_NANOS);
		RateLimitResult probed = this.store.tryAcquire(acquire(OPEN, "alice"));
		assertThat(probed.allowed()).isTrue();
		assertThat(probed.decisions().get(0).limit().capacity()).isEqualTo(5);
		assertThat(this.primary.calls).hasValue(THRESHOLD + 1);
		for (int i = 0; i < 10; i++) {
			this.ticker.addAndGet(PROBE_NANOS / 20);
			this.store.tryAcquire(acquire(OPEN, "alice"));
		}
		assertThat(this.primary.calls).hasValue(THRESHOLD + 1);
		this.ticker.addAndGet(PROBE_NANOS / 2);
		this.store.tryAcquire(acquire(OPEN, "alice"));
		assertThat(this.primary.calls).hasValue(THRESHOLD + 2);
		assertThat(this.infos).isEmpty();
	}

	@Test
	void logsFailuresAtMostOncePerIntervalNotOncePerRequest() {
		FailoverRateLimitStore store = failover(Integer.MAX_VALUE);
		this.primary.failing = true;
		for (int i = 0; i < 200; i++) {
			store.tryAcquire(acquire(OPEN, "user-" + i));
			this.ticker.addAndGet(PROBE_NANOS / 100);
		}
		// 200 failures over two intervals
		assertThat(this.primary.calls).hasValue(200);
		assertThat(this.warnings).hasSize(2);
		assertThat(this.warnings.get(0)).startsWith("Rate limit store failed (IllegalStateException: Redis is down)")
			.contains("0.5");
		assertThat(this.warnings.get(1)).endsWith("(99 similar messages suppressed)");
	}

	@Test
	void logsTheOpeningOfTheBreakerOnceAndNothingWhileItIsOpen() {
		this.primary.failing = true;
		for (int i = 0; i < 500; i++) {
			this.store.tryAcquire(acquire(OPEN, "user-" + i));
		}
		assertThat(this.warnings).hasSize(2);
		assertThat(this.warnings.get(0)).doesNotContain("circuit breaker opened");
		assertThat(this.warnings.get(1)).endsWith("; circuit breaker opened");
	}

	@Test
	void logsTheRecoveryOnceWhenManyRequestsSucceedAtOnce() throws Exception {
		this.primary.failing = true;
		this.store.tryAcquire(acquire(OPEN, "alice"));
		assertThat(this.store.status().fallbackActive()).isTrue();
		this.primary.failing = false;
		ExecutorService threads = Executors.newFixedThreadPool(8);
		try {
			CountDownLatch start = new CountDownLatch(1);
			for (int t = 0; t < 8; t++) {
				String identity = "user-" + t;
				threads.submit(() -> {
					start.await();
					for (int i = 0; i < 200; i++) {
						this.store.tryAcquire(acquire(OPEN, identity));
					}
					return null;
				});
			}
			start.countDown();
			threads.shutdown();
			assertThat(threads.awaitTermination(30, TimeUnit.SECONDS)).isTrue();
		}
		finally {
			threads.shutdownNow();
		}
		assertThat(this.infos).containsExactly(RECOVERED);
		assertThat(this.store.status().fallbackActive()).isFalse();
	}

	@Test
	void logsRecoveriesFromAFlappingStoreAtMostOncePerInterval() {
		for (int i = 0; i < 200; i++) {
			this.primary.failing = (i % 2 == 0);
			this.store.tryAcquire(acquire(OPEN, "user-" + i));
			this.ticker.addAndGet(PROBE_NANOS / 100);
		}
		// 100 failures and 100 recoveries over two intervals; a success between two
		// failures keeps the breaker closed
		assertThat(this.primary.calls).hasValue(200);
		assertThat(this.warnings).hasSize(2);
		assertThat(this.infos).hasSizeBetween(1, 2);
	}

	@Test
	void refundsWhileTheFallbackDecidesGoToTheFallback() {
		this.primary.failing = true;
		List<Acquisition> one = acquire(OPEN, "alice");
		RateLimitResult last = null;
		for (int i = 0; i < 5; i++) {
			last = this.store.tryAcquire(one);
			assertThat(last.allowed()).isTrue();
		}
		assertThat(this.store.tryAcquire(one).allowed()).isFalse();
		this.store.refund(one, last);
		assertThat(this.primary.refunds).isEmpty();
		assertThat(this.store.tryAcquire(one).allowed()).as("the refunded unit").isTrue();
		assertThat(this.store.tryAcquire(one).allowed()).isFalse();
	}

	@Test
	void refundsGoToThePrimaryWhileItDecides() {
		List<Acquisition> one = acquire(OPEN, "alice");
		RateLimitResult result = this.store.tryAcquire(one);
		this.store.refund(one, result);
		assertThat(this.primary.refunds).containsExactly(one);
	}

	@Test
	void aFailedRefundIsSwallowedAndLoggedThrottled() {
		List<Acquisition> one = acquire(OPEN, "alice");
		RateLimitResult result = this.store.tryAcquire(one);
		this.primary.failingRefunds = true;
		for (int i = 0; i < 20; i++) {
			this.store.refund(one, result);
		}
		assertThat(this.warnings).hasSize(1);
		assertThat(this.warnings.get(0)).startsWith("Rate limit store failed to refund");
	}

	@Test
	void asynchronousRefundsGoToTheStoreThatDecidedAndSwallowFailures() {
		List<Acquisition> one = acquire(OPEN, "alice");
		RateLimitResult remote = this.store.tryAcquire(one);
		assertThat(this.store.refundAsync(one, remote).toCompletableFuture().join()).isNull();
		assertThat(this.primary.refunds).containsExactly(one);

		this.primary.failingRefunds = true;
		assertThat(this.store.refundAsync(one, remote).toCompletableFuture().join()).as("dropped, not passed on")
			.isNull();
		assertThat(this.warnings).singleElement().asString().startsWith("Rate limit store failed to refund");

		this.primary.failing = true;
		RateLimitResult local = null;
		for (int i = 0; i < 5; i++) {
			local = this.store.tryAcquire(one);
			assertThat(local.allowed()).isTrue();
		}
		assertThat(this.store.tryAcquire(one).allowed()).isFalse();
		this.store.refundAsync(one, local).toCompletableFuture().join();
		assertThat(this.primary.refunds).hasSize(1);
		assertThat(this.store.tryAcquire(one).allowed()).as("the unit given back to the fallback").isTrue();
	}

	@Test
	void rejectsAFallbackFactorOutsideZeroToOne() {
		for (double factor : new double[] { 0, -0.5, 1.5, Double.NaN }) {
			assertThatIllegalArgumentException()
				.isThrownBy(() -> new FailoverRateLimitStore(this.primary, this.fallback, new FailoverSettings(factor,
						new CircuitBreaker(1, 1), new ThrottledLog(1, System::nanoTime), new ThrottledLog(1, System::nanoTime),
						this.warnings::add, this.infos::add)))
				.withMessage("fallbackFactor must be in (0, 1]: " + factor);
		}
	}

	private FailoverRateLimitStore failover(int threshold) {
		return new FailoverRateLimitStore(this.primary, this.fallback, new FailoverSettings(0.5,
				new CircuitBreaker(threshold, PROBE_NANOS, this.ticker::get),
				new ThrottledLog(PROBE_NANOS, this.ticker::get), new ThrottledLog(PROBE_NANOS, this.ticker::get),
				this.warnings::add, this.infos::add));
	}

	private void openBreaker() {
		for (int i = 0; i < THRESHOLD; i++) {
			this.store.tryAcquire(acquire(OPEN, "opener"));
		}
		assertThat(this.store.status().circuitBreaker()).isEqualTo("OPEN");
	}

	@Test
	void inspectReadsThePrimaryWhileItDecides() {
		this.store.tryAcquire(acquire(OPEN, "alice"));
		BucketSnapshot snapshot = this.store.inspect(OPEN, "alice");
		assertThat(snapshot.store()).isEqualTo(RateLimitResult.MEMORY);
		assertThat(snapshot.limit()).isEqualTo(OPEN);
		assertThat(snapshot.remaining()).isEqualTo(9);
	}

	@Test
	void inspectReadsTheFallbackAtItsReducedQuotaWhileItDecides() {
		this.primary.failing = true;
		this.store.tryAcquire(acquire(OPEN, "alice"));
		BucketSnapshot snapshot = this.store.inspect(OPEN, "alice");
		assertThat(snapshot.store()).isEqualTo(RateLimitResult.FALLBACK);
		assertThat(snapshot.limit().capacity()).isEqualTo(5);
		assertThat(snapshot.remaining()).isEqualTo(4);
		assertThat(snapshot.exists()).isTrue();
	}

	@Test
	void inspectFallsBackWhenThePrimaryFailsToAnswer() {
		this.store.tryAcquire(acquire(OPEN, "alice"));
		this.primary.failing = true;
		BucketSnapshot snapshot = this.store.inspect(OPEN, "alice");
		assertThat(snapshot.store()).isEqualTo(RateLimitResult.FALLBACK);
		assertThat(snapshot.exists()).isFalse();
		assertThat(this.warnings).singleElement().asString().contains("failed to inspect");
	}

	@Test
	void resetForgetsTheBucketInBothStores() {
		for (int i = 0; i < 10; i++) {
			this.store.tryAcquire(acquire(OPEN, "alice"));
		}
		this.primary.failing = true;
		for (int i = 0; i < 5; i++) {
			this.store.tryAcquire(acquire(OPEN, "alice"));
		}
		assertThat(this.store.tryAcquire(acquire(OPEN, "alice")).allowed()).isFalse();
		this.primary.failing = false;
		assertThat(this.store.reset(OPEN, "alice")).isTrue();
		assertThat(this.primary.delegate.inspect(OPEN, "alice").exists()).isFalse();
		assertThat(this.fallback.inspect(OPEN.scaledBy(0.5), "alice").exists()).isFalse();
	}

	@Test
	void resetReportsAFailingPrimaryAfterForgettingTheFallbackBucket() {
		this.primary.failing = true;
		this.store.tryAcquire(acquire(OPEN, "alice"));
		assertThatExceptionOfType(IllegalStateException.class).isThrownBy(() -> this.store.reset(OPEN, "alice"));
		assertThat(this.fallback.inspect(OPEN.scaledBy(0.5), "alice").exists()).isFalse();
	}

	private static List<Acquisition> acquire(RateLimit limit, String identity) {
		return List.of(new Acquisition(limit, identity, 1));
	}

	/** A store that fails on demand, like Redis going away. */
	static final class FlakyStore implements RateLimitStore {

		private final RateLimitStore delegate;

		final AtomicInteger calls = new AtomicInteger();

		final List<List<Acquisition>> refunds = new CopyOnWriteArrayList<>();

		volatile boolean failing;

		volatile boolean failingRefunds;

		FlakyStore(RateLimitStore delegate) {
			this.delegate = delegate;
		}

		@Override
		public BucketSnapshot inspect(RateLimit limit, String identity) {
			if (this.failing) {
				throw new IllegalStateException("Redis is down");
			}
			return this.delegate.inspect(limit, identity);
		}

		@Override
		public boolean reset(RateLimit limit, String identity) {
			if (this.failing) {
				throw new IllegalStateException("Redis is down");
			}
			return this.delegate.reset(limit, identity);
		}

		@Override
		public RateLimitResult tryAcquire(List<Acquisition> acquisitions, long maxDelayMicros) {
			this.calls.incrementAndGet();
			if (this.failing) {
				throw new IllegalStateException("Redis is down");
			}
			return this.delegate.tryAcquire(acquisitions, maxDelayMicros);
		}

		@Override
		public void refund(List<Acquisition> acquisitions, RateLimitResult decided) {
			if (this.failingRefunds) {
				throw new IllegalStateException("Redis is down");
			}
			this.refunds.add(acquisitions);
			this.delegate.refund(acquisitions, decided);
		}

	}

}
