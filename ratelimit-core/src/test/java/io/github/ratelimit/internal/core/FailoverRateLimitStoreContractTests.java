package io.github.ratelimit.internal.core;

import java.util.List;

import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

import io.github.ratelimit.internal.memory.InMemoryRateLimitStore;
import io.github.ratelimit.store.Acquisition;
import io.github.ratelimit.store.BucketSnapshot;
import io.github.ratelimit.store.RateLimit;
import io.github.ratelimit.store.RateLimitResult;
import io.github.ratelimit.store.RateLimitStore;
import io.github.ratelimit.store.StoreStatus;
import io.github.ratelimit.store.contract.MutableClock;
import io.github.ratelimit.store.contract.RateLimitStoreContractTests;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The failover store makes the same decisions as any store, both while its remote store
 * answers and after it has failed over to a local fallback enforcing the whole limit.
 */
class FailoverRateLimitStoreContractTests {

	private static FailoverRateLimitStore failover(RateLimitStore primary, MutableClock clock) {
		return new FailoverRateLimitStore(primary, new InMemoryRateLimitStore(clock, 10_000), new FailoverSettings(1.0,
				new CircuitBreaker(1, Long.MAX_VALUE / 2, System::nanoTime), new ThrottledLog(1, System::nanoTime),
				new ThrottledLog(1, System::nanoTime), (message) -> {
				}, (message) -> {
				}));
	}

	@Nested
	class WhileTheRemoteStoreAnswers extends RateLimitStoreContractTests {

		@Override
		protected RateLimitStore createStore(MutableClock clock) {
			return failover(new InMemoryRateLimitStore(clock, 10_000), clock);
		}

		@Test
		void reportsTheRemoteStoreAsDeciding() {
			StoreStatus status = store().status();
			assertThat(status.name()).isEqualTo(RateLimitResult.MEMORY);
			assertThat(status.deciding()).isEqualTo(RateLimitResult.MEMORY);
			assertThat(status.fallbackActive()).isFalse();
			assertThat(status.circuitBreaker()).isEqualTo("CLOSED");
			// what the wrapped store keeps on this instance, then the fallback's buckets
			assertThat(status.buckets()).extracting(StoreStatus.LocalBuckets::store)
				.containsExactly(RateLimitResult.MEMORY, RateLimitResult.FALLBACK);
		}

	}

	@Nested
	class AfterFailingOver extends RateLimitStoreContractTests {

		@Override
		protected RateLimitStore createStore(MutableClock clock) {
			FailoverRateLimitStore store = failover(new DeadStore(), clock);
			// the first call fails and opens the breaker; from then on the fallback decides alone
			RateLimit probe = RateLimit.of("probe", io.github.ratelimit.Algorithm.FIXED_WINDOW, 1,
					java.time.Duration.ofSeconds(1));
			store.tryAcquire(List.of(new Acquisition(probe, "probe", 1)));
			store.reset(probe, "probe");
			return store;
		}

		@Test
		void reportsTheFallbackAsDeciding() {
			StoreStatus status = store().status();
			assertThat(status.name()).isEqualTo("dead");
			assertThat(status.deciding()).isEqualTo(RateLimitResult.FALLBACK);
			assertThat(status.fallbackActive()).isTrue();
			assertThat(status.circuitBreaker()).isEqualTo("OPEN");
		}

	}

	/** A remote store that never answers, whose resets succeed so the contract's cleanup works. */
	static final class DeadStore implements RateLimitStore {

		@Override
		public RateLimitResult tryAcquire(List<Acquisition> acquisitions, long maxDelayMicros) {
			throw new IllegalStateException("connection refused");
		}

		@Override
		public void refund(List<Acquisition> acquisitions, RateLimitResult decided) {
			throw new IllegalStateException("connection refused");
		}

		@Override
		public BucketSnapshot inspect(RateLimit limit, String identity) {
			throw new IllegalStateException("connection refused");
		}

		@Override
		public boolean reset(RateLimit limit, String identity) {
			return false;
		}

		@Override
		public void resetAll() {
		}

		@Override
		public String name() {
			return "dead";
		}

	}

}
