package io.github.ratelimit.internal.core;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

import org.junit.jupiter.api.Test;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.FailMode;
import io.github.ratelimit.internal.memory.InMemoryRateLimitStore;
import io.github.ratelimit.store.Acquisition;
import io.github.ratelimit.store.RateLimit;
import io.github.ratelimit.store.RateLimitResult;
import io.github.ratelimit.store.RateLimitStore;
import io.github.ratelimit.store.contract.MutableClock;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Refunds go back to the store that decided, and shadow limits never turn a request away,
 * not even when they are fail-closed and the store is down.
 */
class FailoverRefundAndShadowTest {

	private final MutableClock clock = new MutableClock(MutableClock.DEFAULT_START_MICROS);

	private final AtomicBoolean down = new AtomicBoolean();

	private final List<String> primaryRefunds = new ArrayList<>();

	private final InMemoryRateLimitStore primaryState = new InMemoryRateLimitStore(this.clock, 100);

	private final InMemoryRateLimitStore fallback = new InMemoryRateLimitStore(this.clock, 100);

	private final AtomicLong ticker = new AtomicLong();

	private final FailoverRateLimitStore store = new FailoverRateLimitStore(new RateLimitStore() {
		@Override
		public RateLimitResult tryAcquire(List<Acquisition> acquisitions, long maxDelayMicros) {
			if (FailoverRefundAndShadowTest.this.down.get()) {
				throw new IllegalStateException("connection refused");
			}
			return FailoverRefundAndShadowTest.this.primaryState.tryAcquire(acquisitions).decidedBy(RateLimitResult.REDIS);
		}

		@Override
		public void refund(List<Acquisition> acquisitions, RateLimitResult decided) {
			FailoverRefundAndShadowTest.this.primaryRefunds.add(acquisitions.get(0).limit().name());
			FailoverRefundAndShadowTest.this.primaryState.refund(acquisitions, decided);
		}
	}, this.fallback, new FailoverSettings(0.5, new CircuitBreaker(1, 1_000_000_000L, this.ticker::get),
			new ThrottledLog(1, this.ticker::get), new ThrottledLog(1, this.ticker::get), (message) -> {
			}, (message) -> {
			}));

	private final RateLimit limit = RateLimit.of("orders", Algorithm.FIXED_WINDOW, 4, Duration.ofMinutes(1));

	@Test
	void refundOfARemoteDecisionGoesToTheRemoteStoreEvenWhileFallingBack() {
		RateLimiter limiter = new RateLimiter(this.store);
		List<Acquisition> request = List.of(new Acquisition(this.limit, "user:a", 1));
		RateLimitResult decidedRemotely = limiter.acquire(request);
		assertThat(decidedRemotely.store()).isEqualTo(RateLimitResult.REDIS);
		this.down.set(true);
		assertThat(limiter.acquire(request).store()).isEqualTo(RateLimitResult.FALLBACK);
		this.down.set(false);
		limiter.refund(request, decidedRemotely);
		assertThat(this.primaryRefunds).containsExactly("orders");
		// the fallback keeps what it decided: 2 of its 2 places minus the one taken
		assertThat(this.fallback.tryAcquire(List.of(new Acquisition(this.limit.scaledBy(0.5), "user:a", 1)))
			.decisions()
			.get(0)
			.remaining()).isZero();
	}

	@Test
	void refundIsRoutedByTheDecidingStoreNotByTheNameMetricsReport() {
		RateLimiter limiter = new RateLimiter(this.store);
		List<Acquisition> request = List.of(new Acquisition(this.limit, "user:c", 1));
		// a remote decision reported under the fallback's name still goes back to the remote store
		RateLimitResult remote = limiter.acquire(request).decidedBy(RateLimitResult.FALLBACK);
		limiter.refund(request, remote);
		assertThat(this.primaryRefunds).containsExactly("orders");
		this.down.set(true);
		// a fallback decision reported under any name stays in the fallback
		RateLimitResult local = limiter.acquire(request).decidedBy(RateLimitResult.REDIS);
		assertThat(local.refundTo()).isSameAs(this.fallback);
		limiter.refund(request, local);
		assertThat(this.primaryRefunds).containsExactly("orders");
		assertThat(this.fallback.inspect(this.limit.scaledBy(0.5), "user:c").remaining()).isEqualTo(2);
	}

	@Test
	void refundOfAFallbackDecisionStaysInTheFallback() {
		RateLimiter limiter = new RateLimiter(this.store);
		List<Acquisition> request = List.of(new Acquisition(this.limit, "user:b", 1));
		this.down.set(true);
		RateLimitResult decidedLocally = limiter.acquire(request);
		assertThat(decidedLocally.store()).isEqualTo(RateLimitResult.FALLBACK);
		limiter.refund(request, decidedLocally);
		assertThat(this.primaryRefunds).isEmpty();
		assertThat(limiter.acquire(request).decisions().get(0).remaining()).isEqualTo(1);
	}

	@Test
	void concurrencyPermitTakenFromTheFallbackIsReleasedThereAfterTheRemoteStoreIsBack() {
		RateLimiter limiter = new RateLimiter(this.store);
		RateLimit exports = RateLimit.of("exports", Algorithm.CONCURRENCY, 4, Duration.ofMinutes(1));
		List<Acquisition> export = List.of(new Acquisition(exports, "tenant:acme", 1));
		this.down.set(true);
		// the fallback holds half the permits: 2 of 4
		RateLimitResult first = limiter.acquire(export);
		RateLimitResult second = limiter.acquire(export);
		assertThat(first.store()).isEqualTo(RateLimitResult.FALLBACK);
		assertThat(limiter.acquire(export).allowed()).isFalse();
		this.down.set(false);
		limiter.refund(export, first);
		limiter.refund(export, second);
		assertThat(this.primaryRefunds).as("nothing of the fallback's goes to the remote store").isEmpty();
		this.down.set(true);
		assertThat(limiter.acquire(export).allowed()).as("the fallback's permits are back").isTrue();
		assertThat(limiter.acquire(export).allowed()).isTrue();
	}

	@Test
	void concurrencyPermitOfTheRemoteStoreIsReleasedThereAfterAFailover() {
		RateLimiter limiter = new RateLimiter(this.store);
		RateLimit exports = RateLimit.of("exports", Algorithm.CONCURRENCY, 1, Duration.ofMinutes(1));
		List<Acquisition> export = List.of(new Acquisition(exports, "tenant:globex", 1));
		RateLimitResult remote = limiter.acquire(export);
		assertThat(remote.store()).isEqualTo(RateLimitResult.REDIS);
		assertThat(limiter.acquire(export).allowed()).isFalse();
		// the remote store fails while the call runs: another call is decided by the fallback
		this.down.set(true);
		assertThat(limiter.acquire(export).store()).isEqualTo(RateLimitResult.FALLBACK);
		// it answers again by the time the first call completes, whose permit goes back to it
		this.down.set(false);
		limiter.refund(export, remote);
		assertThat(this.primaryRefunds).containsExactly("exports");
		// once the circuit breaker lets calls through again, the remote store has the permit back
		this.ticker.addAndGet(2_000_000_000L);
		RateLimitResult next = limiter.acquire(export);
		assertThat(next.store()).isEqualTo(RateLimitResult.REDIS);
		assertThat(next.allowed()).as("the remote permit is back").isTrue();
	}

	@Test
	void failClosedShadowLimitNeverAnswers503() {
		RateLimit shadowClosed = new RateLimit("login", Algorithm.TOKEN_BUCKET, 2, 2, Duration.ofMinutes(1),
				FailMode.CLOSED, true);
		this.down.set(true);
		RateLimitResult result = this.store.tryAcquire(List.of(new Acquisition(shadowClosed, "ip:203.0.113.1", 1)));
		assertThat(result.allowed()).isTrue();
		assertThat(result.store()).isEqualTo(RateLimitResult.FALLBACK);
	}

}
