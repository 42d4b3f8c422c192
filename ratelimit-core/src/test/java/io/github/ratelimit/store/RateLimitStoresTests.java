package io.github.ratelimit.store;

import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;

import org.junit.jupiter.api.Test;

import io.github.ratelimit.Algorithm;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/**
 * What a plain Java user builds with the public store API alone: an in-memory store, and a
 * chain around a remote store.
 */
class RateLimitStoresTests {

	private static final RateLimit LIMIT = RateLimit.of("orders", Algorithm.FIXED_WINDOW, 4, Duration.ofHours(1));

	private final List<String> failures = new CopyOnWriteArrayList<>();

	private final List<String> warnings = new CopyOnWriteArrayList<>();

	@Test
	void inMemoryStoreDecidesWithinItsBound() {
		RateLimitStore store = RateLimitStores.inMemory(10);
		assertThat(store.name()).isEqualTo(RateLimitResult.MEMORY);
		for (int i = 0; i < 4; i++) {
			assertThat(acquire(store).allowed()).isTrue();
		}
		assertThat(acquire(store).allowed()).isFalse();
		assertThat(store.status().buckets()).singleElement()
			.satisfies((buckets) -> assertThat(buckets.maximum()).isEqualTo(10));
	}

	@Test
	void fallbackDecidesAtItsFactorWhileTheRemoteStoreFailsAndTheFailureIsObserved() throws Exception {
		RateLimitStore store = RateLimitStores.builder(new DeadStore())
			.fallback(RateLimitStores.inMemory(10), 0.5)
			.circuitBreaker(100, Duration.ofMinutes(1))
			.observed((name, failure) -> this.failures.add(name + ": " + failure.getMessage()))
			.log(this.warnings::add, this.warnings::add)
			.build();
		try {
			assertThat(store.name()).isEqualTo("dead");
			RateLimitResult first = acquire(store);
			assertThat(first.allowed()).isTrue();
			assertThat(first.store()).isEqualTo(RateLimitResult.FALLBACK);
			assertThat(acquire(store).allowed()).isTrue();
			// half of the limit's 4
			assertThat(acquire(store).allowed()).isFalse();
			assertThat(this.failures).hasSize(3).allMatch((failure) -> failure.equals("dead: gone"));
			assertThat(this.warnings).isNotEmpty();
			assertThat(store.status().deciding()).isEqualTo(RateLimitResult.FALLBACK);
		}
		finally {
			((AutoCloseable) store).close();
		}
	}

	@Test
	void localFirstNeedsAStoreThatGrantsShares() {
		assertThatIllegalArgumentException()
			.isThrownBy(() -> RateLimitStores.builder(RateLimitStores.inMemory(10))
				.localFirst(Duration.ofMillis(10), Set.of(), 100))
			.withMessageContaining("grants shares");
	}

	@Test
	void fallbackFactorOutsideItsRangeIsRejected() {
		assertThatIllegalArgumentException()
			.isThrownBy(() -> RateLimitStores.builder(new DeadStore()).fallback(RateLimitStores.inMemory(10), 1.5).build())
			.withMessageContaining("fallbackFactor");
	}

	private static RateLimitResult acquire(RateLimitStore store) {
		return store.tryAcquire(List.of(new Acquisition(LIMIT, "alice", 1)));
	}

	/** A remote store that is down. */
	private static final class DeadStore implements RateLimitStore {

		@Override
		public RateLimitResult tryAcquire(List<Acquisition> acquisitions, long maxDelayMicros) {
			throw new IllegalStateException("gone");
		}

		@Override
		public void refund(List<Acquisition> acquisitions, RateLimitResult decided) {
			throw new IllegalStateException("gone");
		}

		@Override
		public String name() {
			return "dead";
		}

	}

}
