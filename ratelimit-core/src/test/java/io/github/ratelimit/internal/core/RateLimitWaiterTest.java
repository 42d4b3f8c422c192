package io.github.ratelimit.internal.core;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.RateLimitExceededException;
import io.github.ratelimit.internal.memory.InMemoryRateLimitStore;
import io.github.ratelimit.store.Acquisition;
import io.github.ratelimit.store.RateLimit;
import io.github.ratelimit.store.RateLimitResult;
import io.github.ratelimit.store.RateLimitStore;
import io.github.ratelimit.store.contract.MutableClock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * Waiting for a permit on a clock and a sleeper the tests control: fair release of
 * reserved slots, timeouts, retries for window algorithms, interrupts and asynchronous
 * waits.
 */
class RateLimitWaiterTest {

	private static final long INTERVAL = 100_000;

	/** One token, one every 100ms. */
	private static final RateLimit BUCKET = new RateLimit("sms", Algorithm.TOKEN_BUCKET, 1, 10, Duration.ofSeconds(1));

	private static final List<Acquisition> ONE = List.of(new Acquisition(BUCKET, "global", 1));

	private final MutableClock clock = new MutableClock();

	private final RecordingStore store = new RecordingStore(new InMemoryRateLimitStore(this.clock, 1_000));

	private final RateLimiter limiter = new RateLimiter(this.store);

	private final RecordingSleeper sleeper = new RecordingSleeper();

	private final ManualScheduler scheduler = new ManualScheduler();

	private final RateLimitWaiter waiter = new RateLimitWaiter(this.limiter, this.clock, this.sleeper, this.scheduler);

	@AfterEach
	void close() {
		this.waiter.close();
	}

	@Test
	void releasesConcurrentCallersInTheOrderTheyAskedOneIntervalApart() throws Exception {
		int callers = 8;
		ExecutorService threads = Executors.newFixedThreadPool(callers);
		try {
			CountDownLatch start = new CountDownLatch(1);
			List<Future<RateLimitResult>> results = new ArrayList<>();
			for (int i = 0; i < callers; i++) {
				results.add(threads.submit(() -> {
					start.await();
					return this.waiter.acquire(ONE, Duration.ofSeconds(1));
				}));
			}
			start.countDown();
			for (Future<RateLimitResult> result : results) {
				assertThat(result.get(10, TimeUnit.SECONDS).allowed()).isTrue();
			}
		}
		finally {
			threads.shutdownNow();
		}
		// in the order the store decided them: 0, I, 2I, ... and each caller slept exactly its delay
		List<Long> expected = new ArrayList<>();
		for (int i = 0; i < callers; i++) {
			expected.add(i * INTERVAL);
		}
		assertThat(this.store.delaysInDecisionOrder()).containsExactlyElementsOf(expected);
		List<Long> slept = new ArrayList<>(this.sleeper.sleeps());
		Collections.sort(slept);
		assertThat(slept).containsExactlyElementsOf(expected.subList(1, callers));
	}

	@Test
	void rejectsAtOnceWithoutConsumingWhenTheSlotIsBeyondTheWait() {
		assertThat(this.waiter.acquire(ONE, Duration.ofMillis(150)).allowed()).isTrue();
		assertThat(this.waiter.acquire(ONE, Duration.ofMillis(150)).delayMicros()).isEqualTo(INTERVAL);
		RateLimitResult rejected = this.waiter.acquire(ONE, Duration.ofMillis(150));
		assertThat(rejected.allowed()).isFalse();
		assertThat(rejected.rejections().get(0).retryAfterMicros()).isEqualTo(2 * INTERVAL);
		assertThat(this.sleeper.sleeps()).as("no sleep for a wait that could not succeed").containsExactly(INTERVAL);
		// the rejection took nothing: the slot after the reserved one is still free
		this.clock.advanceMicros(INTERVAL);
		assertThat(this.waiter.acquire(ONE, Duration.ofMillis(150)).delayMicros()).isEqualTo(INTERVAL);
	}

	@Test
	void retriesAWindowAlgorithmAfterItsRetryAfterWhileWithinTheWait() {
		RateLimit window = RateLimit.of("batch", Algorithm.FIXED_WINDOW, 1, Duration.ofSeconds(1));
		List<Acquisition> acquisitions = List.of(new Acquisition(window, "global", 1));
		this.sleeper.advance(this.clock);
		this.clock.advanceMicros(400_000);
		assertThat(this.waiter.acquire(acquisitions, Duration.ofSeconds(1)).allowed()).isTrue();
		RateLimitResult waited = this.waiter.acquire(acquisitions, Duration.ofSeconds(1));
		assertThat(waited.allowed()).isTrue();
		assertThat(this.sleeper.sleeps()).containsExactly(600_000L);
		assertThat(waited.timestampMicros()).isEqualTo(MutableClock.DEFAULT_START_MICROS + 1_000_000);
		// the next window starts 1s later: more than a 500ms wait allows, so no sleep at all
		assertThat(this.waiter.acquire(acquisitions, Duration.ofMillis(500)).allowed()).isFalse();
		assertThat(this.sleeper.sleeps()).containsExactly(600_000L);
	}

	@Test
	void givesUpRetryingOnceTheWaitIsUsedUpEvenOnAClockThatStandsStill() {
		RateLimit window = RateLimit.of("batch", Algorithm.FIXED_WINDOW, 1, Duration.ofSeconds(1));
		List<Acquisition> acquisitions = List.of(new Acquisition(window, "global", 1));
		this.waiter.acquire(acquisitions, Duration.ZERO);
		// the sleeper does not move the clock: the window never ends, the wait still does
		RateLimitResult result = this.waiter.acquire(acquisitions, Duration.ofMillis(2_500));
		assertThat(result.allowed()).isFalse();
		assertThat(this.sleeper.sleeps()).containsExactly(1_000_000L, 1_000_000L);
	}

	@Test
	void interruptedWaiterGivesItsReservationBackAndKeepsTheFlag() {
		assertThat(this.waiter.acquire(ONE, Duration.ofSeconds(1)).allowed()).isTrue();
		this.sleeper.interruptNext();
		try {
			assertThatExceptionOfType(RateLimitExceededException.class)
				.isThrownBy(() -> this.waiter.acquire(ONE, Duration.ofSeconds(1)))
				.withMessageContaining("Interrupted while waiting for a permit of [sms]")
				.satisfies((ex) -> assertThat(ex.getRetryAfter()).isEqualTo(Duration.ofMillis(100)));
			assertThat(Thread.currentThread().isInterrupted()).isTrue();
		}
		finally {
			Thread.interrupted();
		}
		// the slot at 100ms is free again
		assertThat(this.waiter.acquire(ONE, Duration.ofSeconds(1)).delayMicros()).isEqualTo(INTERVAL);
	}

	@Test
	@Timeout(30)
	void honoursARealInterruptOfASleepingThread() throws Exception {
		RateLimitWaiter realSleeper = new RateLimitWaiter(this.limiter, this.clock, RateLimitSleeper.system(), null);
		RateLimit slow = new RateLimit("slow", Algorithm.TOKEN_BUCKET, 1, 1, Duration.ofHours(1));
		List<Acquisition> acquisitions = List.of(new Acquisition(slow, "global", 1));
		realSleeper.acquire(acquisitions, Duration.ZERO);
		AtomicReference<Throwable> thrown = new AtomicReference<>();
		AtomicReference<Boolean> flag = new AtomicReference<>();
		Thread waiting = new Thread(() -> {
			try {
				realSleeper.acquire(acquisitions, Duration.ofHours(2));
			}
			catch (RuntimeException ex) {
				thrown.set(ex);
				flag.set(Thread.currentThread().isInterrupted());
			}
		});
		waiting.start();
		// the reservation is made once the bucket reports an hour's wait to a plain request
		while (this.store.delaysInDecisionOrder().size() < 2) {
			Thread.onSpinWait();
		}
		waiting.interrupt();
		waiting.join(TimeUnit.SECONDS.toMillis(10));
		assertThat(waiting.isAlive()).isFalse();
		assertThat(thrown.get()).isInstanceOf(RateLimitExceededException.class);
		assertThat(flag.get()).isTrue();
		// the reservation was given back: the next one gets the same slot
		assertThat(this.limiter.acquire(acquisitions, TimeUnit.HOURS.toMicros(2)).delayMicros())
			.isEqualTo(TimeUnit.HOURS.toMicros(1));
	}

	@Test
	void asyncWaitReturnsAtOnceAndCompletesOnTheSchedulerAtTheSlot() throws Exception {
		this.waiter.acquire(ONE, Duration.ZERO);
		Thread caller = Thread.currentThread();
		CompletableFuture<RateLimitResult> permit = this.waiter.acquireAsync(ONE, Duration.ofSeconds(1));
		assertThat(permit).isNotDone();
		assertThat(this.sleeper.sleeps()).as("nobody slept").isEmpty();
		assertThat(this.scheduler.delaysMicros()).containsExactly(INTERVAL);
		AtomicReference<Thread> completedOn = new AtomicReference<>();
		CompletableFuture<RateLimitResult> observed = permit.whenComplete((result, ex) -> completedOn
			.set(Thread.currentThread()));
		this.scheduler.release();
		assertThat(observed.get(10, TimeUnit.SECONDS).delayMicros()).isEqualTo(INTERVAL);
		assertThat(completedOn.get()).isNotSameAs(caller);
		assertThat(completedOn.get().getName()).isEqualTo(ManualScheduler.THREAD_NAME);
	}

	@Test
	void asyncWaitThatCannotSucceedCompletesAtOnceWithTheRejection() {
		this.waiter.acquire(ONE, Duration.ZERO);
		CompletableFuture<RateLimitResult> permit = this.waiter.acquireAsync(ONE, Duration.ofMillis(50));
		assertThat(permit).isCompleted();
		assertThat(permit.join().allowed()).isFalse();
		assertThat(this.scheduler.delaysMicros()).isEmpty();
	}

	@Test
	void cancellingAnAsyncWaitGivesTheReservationBack() {
		this.waiter.acquire(ONE, Duration.ZERO);
		CompletableFuture<RateLimitResult> permit = this.waiter.acquireAsync(ONE, Duration.ofSeconds(1));
		assertThat(permit.cancel(false)).isTrue();
		assertThat(this.waiter.acquire(ONE, Duration.ofSeconds(1)).delayMicros()).isEqualTo(INTERVAL);
	}

	@Test
	void anAsyncWaitCancelledWhileItsRetryIsBeingDecidedGivesThePermitBack() throws InterruptedException {
		RateLimit window = RateLimit.of("batch", Algorithm.FIXED_WINDOW, 1, Duration.ofSeconds(1));
		List<Acquisition> acquisitions = List.of(new Acquisition(window, "global", 1));
		AtomicReference<CompletableFuture<RateLimitResult>> cancelDuringDecision = new AtomicReference<>();
		CountDownLatch refunded = new CountDownLatch(1);
		RateLimitStore cancelling = new RateLimitStore() {

			@Override
			public RateLimitResult tryAcquire(List<Acquisition> list) {
				return tryAcquire(list, 0);
			}

			@Override
			public RateLimitResult tryAcquire(List<Acquisition> list, long maxDelayMicros) {
				CompletableFuture<RateLimitResult> caller = cancelDuringDecision.get();
				if (caller != null) {
					caller.cancel(false);
				}
				return RateLimitWaiterTest.this.store.tryAcquire(list, maxDelayMicros);
			}

			@Override
			public void refund(List<Acquisition> list, RateLimitResult decided) {
				RateLimitWaiterTest.this.store.refund(list, decided);
				refunded.countDown();
			}

		};
		try (RateLimitWaiter racing = new RateLimitWaiter(new RateLimiter(cancelling), this.clock, this.sleeper,
				this.scheduler)) {
			this.clock.advanceMicros(900_000);
			assertThat(this.limiter.acquire(acquisitions).allowed()).isTrue();
			CompletableFuture<RateLimitResult> permit = racing.acquireAsync(acquisitions, Duration.ofSeconds(1));
			assertThat(permit).isNotDone();
			assertThat(this.scheduler.delaysMicros()).containsExactly(100_000L);
			cancelDuringDecision.set(permit);
			this.clock.advanceMicros(100_000);
			this.scheduler.release();
			assertThat(refunded.await(10, TimeUnit.SECONDS)).as("the retry's permit was given back").isTrue();
			assertThat(permit).isCancelled();
			cancelDuringDecision.set(null);
			// the retry was admitted for nobody: the new window's permit is still there
			assertThat(this.limiter.acquire(acquisitions).allowed()).isTrue();
		}
	}

	@Test
	void closingTheWaiterEndsPendingAsyncWaitsAndGivesTheirReservationsBack() {
		this.waiter.acquire(ONE, Duration.ZERO);
		CompletableFuture<RateLimitResult> permit = this.waiter.acquireAsync(ONE, Duration.ofSeconds(1));
		this.waiter.close();
		assertThat(permit).isCompletedExceptionally();
		assertThatExceptionOfType(CancellationException.class).isThrownBy(permit::join);
		assertThat(this.limiter.acquire(ONE, 1_000_000).delayMicros()).isEqualTo(INTERVAL);
		assertThat(this.waiter.acquireAsync(ONE, Duration.ofSeconds(1))).isCompletedExceptionally();
	}

}
