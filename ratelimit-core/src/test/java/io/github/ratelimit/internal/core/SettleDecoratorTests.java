package io.github.ratelimit.internal.core;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BiConsumer;

import org.junit.jupiter.api.Test;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.internal.memory.InMemoryRateLimitStore;
import io.github.ratelimit.store.Acquisition;
import io.github.ratelimit.store.BucketSnapshot;
import io.github.ratelimit.store.RateLimit;
import io.github.ratelimit.store.RateLimitObserver;
import io.github.ratelimit.store.RateLimitResult;
import io.github.ratelimit.store.RateLimitStore;
import io.github.ratelimit.store.contract.MutableClock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.assertThatNoException;

/**
 * Settling through what wraps a store: the limiter merges acquisitions of one bucket as
 * it did when deciding, the failover store settles where the reservation was decided and
 * never fails the caller for it, and the observed store reports only the store's failures.
 */
class SettleDecoratorTests {

	private final MutableClock clock = new MutableClock();

	private final InMemoryRateLimitStore memory = new InMemoryRateLimitStore(this.clock, 100);

	private final RateLimit limit = RateLimit.of("tokens", Algorithm.TOKEN_BUCKET, 10, Duration.ofHours(1));

	private final AtomicBoolean settleFails = new AtomicBoolean();

	private final List<String> warnings = new CopyOnWriteArrayList<>();

	private final AtomicLong ticker = new AtomicLong();

	@Test
	void limiterSettlesAcquisitionsOfOneBucketAtTheSumOfTheirActualCosts() {
		List<String> observed = new ArrayList<>();
		RateLimiter limiter = new RateLimiter(this.memory, new RateLimitObserver() {
			@Override
			public void settled(List<Acquisition> reserved, RateLimitResult decided, long[] actualCosts) {
				observed.add(reserved.size() + " settled at " + actualCosts[0] + "+" + actualCosts[1]);
			}
		});
		List<Acquisition> reserved = List.of(new Acquisition(this.limit, "alice", 3),
				new Acquisition(this.limit, "alice", 4));
		RateLimitResult decided = limiter.acquire(reserved);
		assertThat(decided.allowed()).isTrue();
		limiter.settle(reserved, decided, new long[] { 1, 2 });
		assertThat(this.memory.inspect(this.limit, "alice").remaining()).isEqualTo(7);
		assertThat(observed).containsExactly("2 settled at 1+2");
	}

	@Test
	void limiterSettlesAgainstWhatACappedMergeTook() {
		RateLimiter limiter = new RateLimiter(this.memory);
		// 6 + 6 of a capacity of 10 took the whole capacity, 10
		List<Acquisition> reserved = List.of(new Acquisition(this.limit, "alice", 6),
				new Acquisition(this.limit, "alice", 6));
		RateLimitResult decided = limiter.acquire(reserved);
		assertThat(decided.allowed()).isTrue();
		limiter.settle(reserved, decided, new long[] { 5, 9 });
		// 14 used of 10: 4 tokens of debt, so a request of 1 waits for 5 tokens of 360s
		BucketSnapshot inDebt = this.memory.inspect(this.limit, "alice");
		assertThat(inDebt.remaining()).isZero();
		assertThat(inDebt.retryAfterMicros()).isEqualTo(5 * 360_000_000L);
	}

	@Test
	void limiterLeavesTheStoreOutOfWhatWasSettledAtItsReservation() throws Exception {
		List<String> sent = new CopyOnWriteArrayList<>();
		List<String> observed = new ArrayList<>();
		RateLimiter limiter = new RateLimiter(sending(sent), new RateLimitObserver() {
			@Override
			public void settled(List<Acquisition> reserved, RateLimitResult decided, long[] actualCosts) {
				observed.add(reserved.size() + " settled");
			}
		});
		RateLimit requests = RateLimit.of("requests", Algorithm.FIXED_WINDOW, 10, Duration.ofHours(1));
		List<Acquisition> reserved = List.of(new Acquisition(requests, "alice", 1),
				new Acquisition(this.limit, "alice", 4));
		RateLimitResult decided = limiter.acquire(reserved);
		limiter.settle(reserved, decided, new long[] { 1, 4 });
		limiter.settleAsync(reserved, decided, new long[] { 1, 4 }).toCompletableFuture().get();
		assertThat(sent).as("estimated right: no store call").isEmpty();
		limiter.settle(reserved, decided, new long[] { 1, 2 });
		limiter.settleAsync(reserved, decided, new long[] { 1, 3 }).toCompletableFuture().get();
		assertThat(sent).as("only the bucket whose cost changed").containsExactly("tokens=2", "tokens=3");
		// 4 reserved, 2 and 3 given back
		assertThat(this.memory.inspect(this.limit, "alice").remaining()).isEqualTo(9);
		assertThat(this.memory.inspect(requests, "alice").remaining()).isEqualTo(9);
		assertThat(observed).as("the observer hears of every settlement").hasSize(4);
		// what the store would refuse is refused though the store is not called
		RateLimit exports = RateLimit.of("exports", Algorithm.CONCURRENCY, 2, Duration.ofMinutes(1));
		List<Acquisition> inFlight = List.of(new Acquisition(exports, "acme", 1));
		RateLimitResult held = limiter.acquire(inFlight);
		assertThatIllegalArgumentException().isThrownBy(() -> limiter.settle(inFlight, held, new long[] { 1 }))
			.withMessageContaining("calls in flight");
		assertThat(limiter.settleAsync(inFlight, held, new long[] { 1 }).toCompletableFuture())
			.isCompletedExceptionally();
	}

	@Test
	void failoverSettlesWithTheRemoteStoreAndLogsItsFailureWithoutThrowing() {
		FailoverRateLimitStore failover = failover();
		List<Acquisition> reserved = List.of(new Acquisition(this.limit, "alice", 5));
		RateLimitResult decided = failover.tryAcquire(reserved);
		assertThat(decided.store()).isEqualTo(RateLimitResult.MEMORY);
		this.settleFails.set(true);
		assertThatNoException().isThrownBy(() -> failover.settle(reserved, decided, new long[] { 1 }));
		assertThatNoException()
			.isThrownBy(() -> failover.settleAsync(reserved, decided, new long[] { 1 }).toCompletableFuture().join());
		assertThat(this.warnings).first().asString().contains("failed to settle");
		this.settleFails.set(false);
		failover.settle(reserved, decided, new long[] { 1 });
		assertThat(this.memory.inspect(this.limit, "alice").remaining()).isEqualTo(9);
		// arguments that cannot be settled are the caller's mistake, not the store's failure
		assertThatIllegalArgumentException().isThrownBy(() -> failover.settle(reserved, decided, new long[] { -1 }));
	}

	@Test
	void observedStoreReportsTheStoresFailuresOnly() {
		List<String> failures = new ArrayList<>();
		ObservedRateLimitStore observed = new ObservedRateLimitStore(failing(), new RateLimitObserver() {
			@Override
			public void storeFailed(String store, Throwable failure) {
				failures.add(failure.getMessage());
			}
		});
		RateLimit exports = RateLimit.of("exports", Algorithm.CONCURRENCY, 2, Duration.ofMinutes(1));
		List<Acquisition> inFlight = List.of(new Acquisition(exports, "acme", 1));
		RateLimitResult held = observed.tryAcquire(inFlight);
		assertThatIllegalArgumentException().isThrownBy(() -> observed.settle(inFlight, held, new long[] { 1 }));
		assertThat(failures).isEmpty();
		List<Acquisition> reserved = List.of(new Acquisition(this.limit, "alice", 5));
		RateLimitResult decided = observed.tryAcquire(reserved);
		this.settleFails.set(true);
		assertThat(observed.settleAsync(reserved, decided, new long[] { 1 }).toCompletableFuture())
			.isCompletedExceptionally();
		assertThat(failures).containsExactly("connection refused");
	}

	private FailoverRateLimitStore failover() {
		return new FailoverRateLimitStore(failing(), new InMemoryRateLimitStore(this.clock, 100),
				new FailoverSettings(1.0, new CircuitBreaker(1, 1_000_000_000L, this.ticker::get),
						new ThrottledLog(1, this.ticker::get), new ThrottledLog(1, this.ticker::get), this.warnings::add,
						(message) -> {
						}));
	}

	/** The in-memory store, writing down each settlement it is sent as {@code name=actual}. */
	private RateLimitStore sending(List<String> sent) {
		return watchingSettlements((reserved, actualCosts) -> {
			for (int i = 0; i < actualCosts.length; i++) {
				sent.add(reserved.get(i).limit().name() + "=" + actualCosts[i]);
			}
		});
	}

	/** The in-memory store, whose settlements fail while {@link #settleFails} is set. */
	private RateLimitStore failing() {
		return watchingSettlements((reserved, actualCosts) -> {
			if (this.settleFails.get()) {
				throw new IllegalStateException("connection refused");
			}
		});
	}

	/** The in-memory store, handing every settlement to {@code onSettle} before it settles. */
	private RateLimitStore watchingSettlements(BiConsumer<List<Acquisition>, long[]> onSettle) {
		return new RateLimitStore() {

			@Override
			public RateLimitResult tryAcquire(List<Acquisition> acquisitions, long maxDelayMicros) {
				return SettleDecoratorTests.this.memory.tryAcquire(acquisitions, maxDelayMicros);
			}

			@Override
			public void refund(List<Acquisition> acquisitions, RateLimitResult decided) {
				SettleDecoratorTests.this.memory.refund(acquisitions, decided);
			}

			@Override
			public void settle(List<Acquisition> reserved, RateLimitResult decided, long[] actualCosts) {
				onSettle.accept(reserved, actualCosts);
				SettleDecoratorTests.this.memory.settle(reserved, decided, actualCosts);
			}

		};
	}

}
