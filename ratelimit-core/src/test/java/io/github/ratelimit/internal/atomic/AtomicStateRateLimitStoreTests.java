package io.github.ratelimit.internal.atomic;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.internal.core.BucketStateCodec;
import io.github.ratelimit.store.Acquisition;
import io.github.ratelimit.store.AtomicStateStorage;
import io.github.ratelimit.store.BucketKey;
import io.github.ratelimit.store.RateLimit;
import io.github.ratelimit.store.RateLimitResult;
import io.github.ratelimit.store.RateLimitStore;
import io.github.ratelimit.store.RateLimitStores;
import io.github.ratelimit.store.contract.MutableClock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

class AtomicStateRateLimitStoreTests {

	private final MutableClock clock = new MutableClock();

	private final RateLimit hourly = RateLimit.of("orders", Algorithm.TOKEN_BUCKET, 250, Duration.ofHours(1));

	@Test
	void decidesAtTheStoragesTimeUnlessGivenAClock() {
		LockingMapStorage storage = new LockingMapStorage(() -> MutableClock.DEFAULT_START_MICROS + 42);
		RateLimitResult result = RateLimitStores.atomic(storage)
			.tryAcquire(List.of(new Acquisition(this.hourly, "alice", 1)));
		assertThat(result.timestampMicros()).isEqualTo(MutableClock.DEFAULT_START_MICROS + 42);
		assertThat(result.store()).isEqualTo("locking-map");
	}

	@Test
	void writesAStateThatExpiresOneIdleTimeAfterTheDecision() {
		RecordingStorage storage = new RecordingStorage(new LockingMapStorage(this.clock::nowMicros));
		AtomicStateRateLimitStore.builder(storage)
			.build()
			.tryAcquire(List.of(new Acquisition(this.hourly, "alice", 1)));
		assertThat(storage.expiresAt).isEqualTo(this.clock.nowMicros() + this.hourly.idleTtlMicros());
	}

	@Test
	void keepsAStateInDebtUntilTheDebtIsPaidThoughARefundFollows() {
		RecordingStorage storage = new RecordingStorage(new LockingMapStorage(this.clock::nowMicros));
		AtomicStateRateLimitStore store = AtomicStateRateLimitStore.builder(storage).build();
		List<Acquisition> reserved = List.of(new Acquisition(this.hourly, "alice", 10));
		RateLimitResult decided = store.tryAcquire(reserved);
		List<Acquisition> other = List.of(new Acquisition(this.hourly, "alice", 1));
		RateLimitResult otherDecided = store.tryAcquire(other);
		// 751 tokens used of 250 an hour: the state matters until they have refilled, beyond its idle time
		store.settle(reserved, decided, new long[] { 750 });
		long debtPaid = this.clock.nowMicros() + 3 * this.hourly.idleTtlMicros() + this.hourly.emissionIntervalMicros();
		assertThat(storage.expiresAt).isEqualTo(debtPaid);
		store.refund(other, otherDecided);
		assertThat(storage.expiresAt).as("after a refund").isEqualTo(debtPaid - this.hourly.emissionIntervalMicros());
	}

	@Test
	void requestRejectedByOneLimitWritesNothing() {
		RecordingStorage storage = new RecordingStorage(new LockingMapStorage(this.clock::nowMicros));
		RateLimitStore store = AtomicStateRateLimitStore.builder(storage).clock(this.clock).build();
		RateLimit tight = RateLimit.of("tight", Algorithm.FIXED_WINDOW, 1, Duration.ofMinutes(1));
		store.tryAcquire(List.of(new Acquisition(tight, "alice", 1)));
		storage.writes = 0;
		RateLimitResult rejected = store
			.tryAcquire(List.of(new Acquisition(this.hourly, "alice", 1), new Acquisition(tight, "alice", 1)));
		assertThat(rejected.allowed()).isFalse();
		assertThat(storage.writes).isZero();
	}

	@ParameterizedTest
	@EnumSource(Algorithm.class)
	void readsAStateOfAnotherAlgorithmAsAFreshBucket(Algorithm algorithm) {
		LockingMapStorage storage = new LockingMapStorage(this.clock::nowMicros);
		RateLimitStore store = AtomicStateRateLimitStore.builder(storage).clock(this.clock).build();
		RateLimit before = RateLimit.of("search", algorithm, 2, Duration.ofMinutes(1));
		store.tryAcquire(List.of(new Acquisition(before, "alice", 2)));
		Algorithm other = (algorithm == Algorithm.FIXED_WINDOW) ? Algorithm.TOKEN_BUCKET : Algorithm.FIXED_WINDOW;
		RateLimit after = RateLimit.of("search", other, 2, Duration.ofMinutes(1));
		assertThat(store.tryAcquire(List.of(new Acquisition(after, "alice", 2))).allowed()).isTrue();
	}

	@Test
	void readsBytesItCannotDecodeAsAFreshBucket() {
		LockingMapStorage storage = new LockingMapStorage(this.clock::nowMicros);
		BucketKey key = new BucketKey("orders", "alice");
		storage.update(List.of(key), (transaction) -> {
			transaction.write(0, new byte[] { BucketStateCodec.VERSION, 1, 7 }, Long.MAX_VALUE);
			return null;
		});
		RateLimitStore store = AtomicStateRateLimitStore.builder(storage).clock(this.clock).build();
		assertThat(store.inspect(this.hourly, "alice").exists()).isFalse();
		assertThat(store.tryAcquire(List.of(new Acquisition(this.hourly, "alice", 250))).allowed()).isTrue();
	}

	@Test
	void aBlockingStorageHoldsItsCallerNoLongerThanTheTimeout() {
		CountDownLatch release = new CountDownLatch(1);
		AtomicStateStorage hanging = new HangingStorage(release);
		try (AtomicStateRateLimitStore store = AtomicStateRateLimitStore.builder(hanging)
			.blocking(Duration.ofMillis(50), 1)
			.build()) {
			// the caller's own call is interrupted at its deadline, and the interrupt taken back
			assertThatExceptionOfType(RuntimeException.class)
				.isThrownBy(() -> store.tryAcquire(List.of(new Acquisition(this.hourly, "alice", 1))))
				.withMessageContaining("did not answer within");
			assertThat(Thread.currentThread().isInterrupted()).isFalse();
			// an asynchronous call hangs holding the one permit: the next call waits for it no
			// longer than its own deadline
			store.tryAcquireAsync(List.of(new Acquisition(this.hourly, "carol", 1)), 0);
			assertThatExceptionOfType(RuntimeException.class)
				.isThrownBy(() -> store.tryAcquire(List.of(new Acquisition(this.hourly, "bob", 1))))
				.withMessageMatching(".*(is busy|did not answer within).*");
			assertThat(Thread.currentThread().isInterrupted()).isFalse();
		}
		finally {
			release.countDown();
		}
	}

	@Test
	void aCallerCallingAgainAtOnceFindsTheThreadThatJustAnsweredIt() throws Exception {
		LockingMapStorage storage = new LockingMapStorage(this.clock::nowMicros);
		try (AtomicStateRateLimitStore store = AtomicStateRateLimitStore.builder(storage)
			.blocking(Duration.ofSeconds(5), 1)
			.build()) {
			for (int i = 0; i < 2_000; i++) {
				List<Acquisition> one = List.of(new Acquisition(this.hourly, "caller-" + i, 1));
				assertThat(store.tryAcquireAsync(one, 0).toCompletableFuture().get(5, TimeUnit.SECONDS).allowed())
					.isTrue();
			}
		}
	}

	@Test
	void aBurstBeyondThePermitsWaitsItsTurnInsteadOfFailing() throws Exception {
		CountDownLatch inside = new CountDownLatch(1);
		CountDownLatch release = new CountDownLatch(1);
		LockingMapStorage storage = new LockingMapStorage(this.clock::nowMicros) {

			@Override
			public <T> T update(List<BucketKey> keys, Function<Transaction, T> body) {
				if (keys.get(0).identity().equals("first")) {
					inside.countDown();
					try {
						release.await(5, TimeUnit.SECONDS);
					}
					catch (InterruptedException ex) {
						Thread.currentThread().interrupt();
					}
				}
				return super.update(keys, body);
			}

		};
		try (AtomicStateRateLimitStore store = AtomicStateRateLimitStore.builder(storage)
			.blocking(Duration.ofSeconds(5), 1)
			.build()) {
			var first = store.tryAcquireAsync(List.of(new Acquisition(this.hourly, "first", 1)), 0)
				.toCompletableFuture();
			assertThat(inside.await(5, TimeUnit.SECONDS)).isTrue();
			var second = java.util.concurrent.CompletableFuture
				.supplyAsync(() -> store.tryAcquire(List.of(new Acquisition(this.hourly, "second", 1))));
			release.countDown();
			assertThat(first.get(5, TimeUnit.SECONDS).allowed()).isTrue();
			assertThat(second.get(5, TimeUnit.SECONDS).allowed()).isTrue();
		}
	}

	@Test
	void aBlockingStorageDecidesOnItsCallersThreadWithoutAHandOff() {
		AtomicReference<String> thread = new AtomicReference<>();
		LockingMapStorage storage = recordingThread(thread);
		try (AtomicStateRateLimitStore store = AtomicStateRateLimitStore.builder(storage)
			.blocking(Duration.ofSeconds(5), 2)
			.build()) {
			assertThat(store.tryAcquire(List.of(new Acquisition(this.hourly, "alice", 1))).allowed()).isTrue();
			assertThat(thread.get()).isEqualTo(Thread.currentThread().getName());
			assertThat(Thread.currentThread().isInterrupted()).isFalse();
		}
	}

	@Test
	void asynchronousCallsOfABlockingStorageRunOnTheStoresOwnThreads() throws Exception {
		AtomicReference<String> thread = new AtomicReference<>();
		LockingMapStorage storage = recordingThread(thread);
		try (AtomicStateRateLimitStore store = AtomicStateRateLimitStore.builder(storage)
			.blocking(Duration.ofSeconds(5), 2)
			.build()) {
			RateLimitResult result = store.tryAcquireAsync(List.of(new Acquisition(this.hourly, "alice", 1)), 0)
				.toCompletableFuture()
				.get(5, TimeUnit.SECONDS);
			assertThat(result.allowed()).isTrue();
			assertThat(thread.get()).isEqualTo("ratelimit-locking-map").isNotEqualTo(Thread.currentThread().getName());
		}
	}

	/** A storage that records the name of the thread each update runs on. */
	private LockingMapStorage recordingThread(AtomicReference<String> thread) {
		return new LockingMapStorage(this.clock::nowMicros) {

			@Override
			public <T> T update(List<BucketKey> keys, Function<Transaction, T> body) {
				thread.set(Thread.currentThread().getName());
				return super.update(keys, body);
			}

		};
	}

	/** Counts the writes of a storage and keeps the last expiry written. */
	private static final class RecordingStorage implements AtomicStateStorage {

		private final AtomicStateStorage storage;

		int writes;

		long expiresAt;

		RecordingStorage(AtomicStateStorage storage) {
			this.storage = storage;
		}

		@Override
		public <T> T update(List<BucketKey> keys, Function<Transaction, T> body) {
			return this.storage.update(keys, (transaction) -> body.apply(new Transaction() {

				@Override
				public long nowMicros() {
					return transaction.nowMicros();
				}

				@Override
				public byte[] state(int index) {
					return transaction.state(index);
				}

				@Override
				public void write(int index, byte[] state, long expiresAtMicros) {
					RecordingStorage.this.writes++;
					RecordingStorage.this.expiresAt = expiresAtMicros;
					transaction.write(index, state, expiresAtMicros);
				}

			}));
		}

		@Override
		public boolean delete(BucketKey key) {
			return this.storage.delete(key);
		}

		@Override
		public void deleteAll() {
			this.storage.deleteAll();
		}

	}

	/** A storage whose every call waits until released, as a hung database does. */
	private static final class HangingStorage implements AtomicStateStorage {

		private final CountDownLatch release;

		HangingStorage(CountDownLatch release) {
			this.release = release;
		}

		@Override
		public <T> T update(List<BucketKey> keys, Function<Transaction, T> body) {
			try {
				this.release.await(10, TimeUnit.SECONDS);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
			}
			throw new IllegalStateException("released");
		}

		@Override
		public boolean delete(BucketKey key) {
			return false;
		}

		@Override
		public void deleteAll() {
		}

	}

}
