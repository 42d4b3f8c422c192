package io.github.ratelimit.internal.overload;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import org.junit.jupiter.api.Test;

import io.github.ratelimit.RequestPriority;
import io.github.ratelimit.internal.overload.OverloadLimiter.Outcome;
import io.github.ratelimit.internal.overload.OverloadLimiter.Permit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/**
 * The bounded wait of critical calls in {@link OverloadLimiter}: hand-off to the oldest
 * waiter, no lower priority admitted while one waits, timeouts that shed once and lose no
 * place, cancellation, and both the parking and the asynchronous form.
 */
class OverloadLimiterWaitTests {

	private static final long WAIT = Duration.ofMillis(100).toNanos();

	private final AtomicLong now = new AtomicLong(1_000);

	private final ManualTimer timer = new ManualTimer();

	@Test
	void aReleasedPlaceGoesToTheOldestWaiterWithoutFreeingIt() {
		RecordingLimit algorithm = new RecordingLimit(2);
		OverloadLimiter limiter = waiting(algorithm);
		Permit first = limiter.tryAcquire(RequestPriority.CRITICAL);
		Permit second = limiter.tryAcquire(RequestPriority.CRITICAL);
		CompletableFuture<Permit> oldest = limiter.acquireAsync(RequestPriority.CRITICAL);
		CompletableFuture<Permit> youngest = limiter.acquireAsync(RequestPriority.CRITICAL);
		assertThat(oldest).isNotDone();
		assertThat(youngest).isNotDone();
		assertThat(limiter.waiting()).isEqualTo(2);

		this.now.addAndGet(50);
		first.release(Outcome.SUCCEEDED);
		assertThat(oldest).isCompleted();
		assertThat(oldest.join().shed()).isFalse();
		assertThat(youngest).isNotDone();
		assertThat(limiter.inFlight()).isEqualTo(2);
		assertThat(limiter.waiting()).isOne();

		second.release(Outcome.SUCCEEDED);
		assertThat(youngest.join().shed()).isFalse();
		assertThat(limiter.waiting()).isZero();
		assertThat(this.timer.pending()).isZero();
		assertThat(limiter.waited(true)).isEqualTo(2);
		assertThat(limiter.shed(RequestPriority.CRITICAL)).isZero();

		// the wait is not part of the call's latency: the sample starts at admission
		this.now.addAndGet(7);
		oldest.join().release(Outcome.SUCCEEDED);
		youngest.join().release(Outcome.SUCCEEDED);
		assertThat(algorithm.samples).extracting(RecordingLimit.Sample::rttNanos).containsExactly(50L, 50L, 7L, 7L);
		assertThat(limiter.inFlight()).isZero();
	}

	@Test
	void noNormalOrSheddableCallIsAdmittedWhileACriticalCallWaits() {
		OverloadLimiter limiter = waiting(new RecordingLimit(10));
		List<Permit> held = new ArrayList<>();
		for (int i = 0; i < 10; i++) {
			held.add(limiter.tryAcquire(RequestPriority.CRITICAL));
		}
		CompletableFuture<Permit> first = limiter.acquireAsync(RequestPriority.CRITICAL);
		CompletableFuture<Permit> second = limiter.acquireAsync(RequestPriority.CRITICAL);
		for (int i = 0; i < 4; i++) {
			held.remove(0).release(Outcome.IGNORED);
		}
		// two places went to the waiters, two back to the pool: room for every priority
		// only once no critical call waits
		assertThat(first.join().shed()).isFalse();
		assertThat(second.join().shed()).isFalse();
		assertThat(limiter.inFlight()).isEqualTo(8);
		CompletableFuture<Permit> third = limiter.acquireAsync(RequestPriority.CRITICAL);
		assertThat(third.join().shed()).isFalse();
		assertThat(limiter.inFlight()).isEqualTo(9);

		OverloadLimiter full = waiting(new RecordingLimit(10));
		for (int i = 0; i < 10; i++) {
			full.tryAcquire(RequestPriority.CRITICAL);
		}
		CompletableFuture<Permit> waiter = full.acquireAsync(RequestPriority.CRITICAL);
		assertThat(full.tryAcquire(RequestPriority.SHEDDABLE).shed()).isTrue();
		assertThat(full.acquireAsync(RequestPriority.NORMAL).join().shed()).isTrue();
		assertThat(full.shed(RequestPriority.NORMAL)).isOne();
		assertThat(full.shed(RequestPriority.SHEDDABLE)).isOne();
		assertThat(waiter).isNotDone();
	}

	@Test
	void aShrunkLimitHandsNothingOverAndAGrownOneAdmitsTheWaiters() {
		RecordingLimit algorithm = new RecordingLimit(10);
		OverloadLimiter limiter = waiting(algorithm);
		List<Permit> held = new ArrayList<>();
		for (int i = 0; i < 10; i++) {
			held.add(limiter.tryAcquire(RequestPriority.CRITICAL));
		}
		algorithm.set(2);
		held.remove(0).release(Outcome.SUCCEEDED);
		assertThat(limiter.limit()).isEqualTo(2);
		CompletableFuture<Permit> first = limiter.acquireAsync(RequestPriority.CRITICAL);
		CompletableFuture<Permit> second = limiter.acquireAsync(RequestPriority.CRITICAL);
		// places above the new limit go back to the pool, not to the waiters
		for (int i = 0; i < 7; i++) {
			held.remove(0).release(Outcome.SUCCEEDED);
		}
		assertThat(limiter.inFlight()).isEqualTo(2);
		assertThat(first).isNotDone();
		assertThat(second).isNotDone();
		// the next release hands its place over, and its sample raises the limit: the
		// other waiter is admitted too
		algorithm.set(20);
		held.remove(0).release(Outcome.SUCCEEDED);
		assertThat(limiter.limit()).isEqualTo(20);
		assertThat(first.join().shed()).isFalse();
		assertThat(second.join().shed()).isFalse();
		assertThat(limiter.inFlight()).isEqualTo(3);
		assertThat(limiter.waited(true)).isEqualTo(2);
	}

	@Test
	void aWaitThatEndsShedsTheCallOnceAndLosesNoPlace() {
		OverloadLimiter limiter = waiting(new RecordingLimit(1));
		Permit held = limiter.tryAcquire(RequestPriority.CRITICAL);
		CompletableFuture<Permit> waiter = limiter.acquireAsync(RequestPriority.CRITICAL);
		this.timer.fireAll();
		assertThat(waiter.join()).isSameAs(Permit.SHED);
		assertThat(limiter.shed(RequestPriority.CRITICAL)).isOne();
		assertThat(limiter.shed(RequestPriority.CRITICAL, ShedReason.WAIT)).isOne();
		assertThat(limiter.waited(false)).isOne();
		assertThat(limiter.waiting()).isZero();
		this.timer.fireAll();
		assertThat(limiter.shed(RequestPriority.CRITICAL)).isOne();
		held.release(Outcome.SUCCEEDED);
		assertThat(limiter.inFlight()).isZero();
		assertThat(limiter.tryAcquire(RequestPriority.SHEDDABLE).shed()).isFalse();
	}

	@Test
	void theQueueHoldsAtMostTheLimit() {
		OverloadLimiter limiter = waiting(new RecordingLimit(2));
		limiter.tryAcquire(RequestPriority.CRITICAL);
		limiter.tryAcquire(RequestPriority.CRITICAL);
		limiter.acquireAsync(RequestPriority.CRITICAL);
		limiter.acquireAsync(RequestPriority.CRITICAL);
		CompletableFuture<Permit> third = limiter.acquireAsync(RequestPriority.CRITICAL);
		assertThat(third.join()).isSameAs(Permit.SHED);
		assertThat(limiter.waiting()).isEqualTo(2);
		assertThat(limiter.shed(RequestPriority.CRITICAL)).isOne();
		assertThat(limiter.shed(RequestPriority.CRITICAL, ShedReason.QUEUE)).isOne();
	}

	@Test
	void theQueueHoldsAsManyAsThePlacesThatFreeWithinTheWait() {
		OverloadLimiter limiter = waiting(new RecordingLimit(2));
		Permit first = limiter.tryAcquire(RequestPriority.CRITICAL);
		limiter.tryAcquire(RequestPriority.CRITICAL);
		// calls take a quarter of the wait: 2 places free 4 times within it, 8 waiters get in
		this.now.addAndGet(WAIT / 4);
		first.release(Outcome.SUCCEEDED);
		limiter.tryAcquire(RequestPriority.CRITICAL);
		List<CompletableFuture<Permit>> waiters = new ArrayList<>();
		for (int i = 0; i < 9; i++) {
			waiters.add(limiter.acquireAsync(RequestPriority.CRITICAL));
		}
		assertThat(waiters.subList(0, 8)).allSatisfy((waiter) -> assertThat(waiter).isNotDone());
		assertThat(waiters.get(8).join()).isSameAs(Permit.SHED);
		assertThat(limiter.waiting()).isEqualTo(8);
		assertThat(limiter.shed(RequestPriority.CRITICAL, ShedReason.QUEUE)).isOne();
	}

	@Test
	void aBurstOfSlowCallsBarelyShrinksTheQueue() {
		OverloadLimiter limiter = waiting(new RecordingLimit(2));
		Permit first = limiter.tryAcquire(RequestPriority.CRITICAL);
		this.now.addAndGet(WAIT / 4);
		first.release(Outcome.SUCCEEDED);
		// a pause: calls that took the whole wait and more
		for (int i = 0; i < 4; i++) {
			Permit slow = limiter.tryAcquire(RequestPriority.CRITICAL);
			this.now.addAndGet(2 * WAIT);
			slow.release(Outcome.SUCCEEDED);
		}
		limiter.tryAcquire(RequestPriority.CRITICAL);
		limiter.tryAcquire(RequestPriority.CRITICAL);
		// the fastest recent round trip rose from 25 to about 36 ms: 6 waiters, not 2
		for (int i = 0; i < 7; i++) {
			limiter.acquireAsync(RequestPriority.CRITICAL);
		}
		assertThat(limiter.waiting()).isEqualTo(6);
		assertThat(limiter.shed(RequestPriority.CRITICAL, ShedReason.QUEUE)).isOne();
	}

	@Test
	void aWaiterCancelledBeforeAPlaceFreesLeavesTheQueue() {
		OverloadLimiter limiter = waiting(new RecordingLimit(1));
		Permit held = limiter.tryAcquire(RequestPriority.CRITICAL);
		CompletableFuture<Permit> waiter = limiter.acquireAsync(RequestPriority.CRITICAL);
		waiter.cancel(false);
		assertThat(limiter.waiting()).isZero();
		held.release(Outcome.SUCCEEDED);
		assertThat(limiter.inFlight()).isZero();
		this.timer.fireAll();
		assertThat(limiter.shed(RequestPriority.CRITICAL)).isZero();
	}

	@Test
	void aPlaceHandedToAWaiterCancelledMeanwhileIsReleased() {
		List<CompletableFuture<Permit>> waiters = new ArrayList<>();
		// the hand-off cancels the waiter's timer between taking the place and completing
		// the future: cancelling the future there is the exchange going away at that moment
		WaitTimer cancelling = (task, delayNanos) -> () -> waiters.get(0).cancel(false);
		OverloadLimiter limiter = OverloadLimiter.builder(new RecordingLimit(1)).ticker(this.now::get)
			.criticalWait(Duration.ofNanos(WAIT)).timer(cancelling).build();
		Permit held = limiter.tryAcquire(RequestPriority.CRITICAL);
		waiters.add(limiter.acquireAsync(RequestPriority.CRITICAL));
		held.release(Outcome.SUCCEEDED);
		assertThat(waiters.get(0)).isCancelled();
		assertThat(limiter.waiting()).isZero();
		assertThat(limiter.inFlight()).isZero();
		assertThat(limiter.tryAcquire(RequestPriority.SHEDDABLE).shed()).isFalse();
	}

	@Test
	void shadowModeNeverWaits() {
		OverloadLimiter limiter = OverloadLimiter.builder(new RecordingLimit(1)).ticker(this.now::get)
			.criticalWait(Duration.ofMillis(100)).timer(this.timer).shadow(true).build();
		limiter.tryAcquire(RequestPriority.CRITICAL);
		Permit over = limiter.acquireAsync(RequestPriority.CRITICAL).join();
		assertThat(over.shed()).isFalse();
		assertThat(over.overLimit()).isTrue();
		assertThat(limiter.acquire(RequestPriority.CRITICAL, WAIT).overLimit()).isTrue();
		assertThat(limiter.waiting()).isZero();
	}

	@Test
	void withoutACriticalWaitNothingWaits() {
		OverloadLimiter limiter = OverloadLimiter.builder(new RecordingLimit(1)).timer(this.timer).build();
		limiter.tryAcquire(RequestPriority.CRITICAL);
		assertThat(limiter.acquireAsync(RequestPriority.CRITICAL).join()).isSameAs(Permit.SHED);
		assertThat(limiter.acquire(RequestPriority.CRITICAL, 0)).isSameAs(Permit.SHED);
		assertThat(limiter.criticalWaitNanos()).isZero();
	}

	@Test
	void criticalWaitMustNotBeNegative() {
		assertThatIllegalArgumentException()
			.isThrownBy(() -> OverloadLimiter.builder(new RecordingLimit(1)).criticalWait(Duration.ofMillis(-1)))
			.withMessageContaining("critical-wait");
	}

	@Test
	void aParkedWaiterIsAdmittedWhenAPlaceFrees() throws Exception {
		OverloadLimiter limiter = OverloadLimiter.builder(new RecordingLimit(1)).build();
		Permit held = limiter.tryAcquire(RequestPriority.CRITICAL);
		ExecutorService executor = Executors.newSingleThreadExecutor();
		try {
			Future<Permit> waiter = executor.submit(
					() -> limiter.acquire(RequestPriority.CRITICAL, TimeUnit.SECONDS.toNanos(30)));
			awaitWaiting(limiter, 1);
			held.release(Outcome.SUCCEEDED);
			Permit admitted = waiter.get(30, TimeUnit.SECONDS);
			assertThat(admitted.shed()).isFalse();
			assertThat(limiter.inFlight()).isOne();
			admitted.release(Outcome.SUCCEEDED);
			assertThat(limiter.inFlight()).isZero();
		}
		finally {
			executor.shutdownNow();
		}
	}

	@Test
	void aParkedWaiterIsShedWhenItsWaitEndsOrItIsInterrupted() throws Exception {
		OverloadLimiter limiter = OverloadLimiter.builder(new RecordingLimit(1)).build();
		Permit held = limiter.tryAcquire(RequestPriority.CRITICAL);
		assertThat(limiter.acquire(RequestPriority.CRITICAL, TimeUnit.MILLISECONDS.toNanos(20)))
			.isSameAs(Permit.SHED);
		assertThat(limiter.shed(RequestPriority.CRITICAL)).isOne();
		assertThat(limiter.waiting()).isZero();

		CountDownLatch done = new CountDownLatch(1);
		boolean[] stillInterrupted = new boolean[1];
		Permit[] result = new Permit[1];
		Thread waiter = new Thread(() -> {
			result[0] = limiter.acquire(RequestPriority.CRITICAL, TimeUnit.SECONDS.toNanos(30));
			stillInterrupted[0] = Thread.currentThread().isInterrupted();
			done.countDown();
		});
		waiter.start();
		awaitWaiting(limiter, 1);
		waiter.interrupt();
		assertThat(done.await(30, TimeUnit.SECONDS)).isTrue();
		assertThat(result[0]).isSameAs(Permit.SHED);
		assertThat(stillInterrupted[0]).isTrue();
		assertThat(limiter.shed(RequestPriority.CRITICAL)).isEqualTo(2);
		held.release(Outcome.SUCCEEDED);
		assertThat(limiter.inFlight()).isZero();
	}

	@Test
	void theLimitersOwnTimerEndsAsynchronousWaits() {
		try (OverloadLimiter limiter = OverloadLimiter.builder(new RecordingLimit(1))
			.criticalWait(Duration.ofMillis(20))
			.build()) {
			Permit held = limiter.tryAcquire(RequestPriority.CRITICAL);
			assertThat(limiter.acquireAsync(RequestPriority.CRITICAL).orTimeout(30, TimeUnit.SECONDS).join())
				.isSameAs(Permit.SHED);
			held.release(Outcome.SUCCEEDED);
			assertThat(limiter.inFlight()).isZero();
		}
	}

	@Test
	void racingWaitersReleasesTimeoutsAndCancellationsNeverPassTheLimitNorLoseAPlace() throws Exception {
		int limit = 2;
		try (OverloadLimiter limiter = OverloadLimiter.builder(new RecordingLimit(limit) {

			@Override
			public void onSample(long startNanos, long rttNanos, int inFlight, int ceiling, boolean dropped) {
				// keeps nothing
			}

		}).criticalWait(Duration.ofNanos(200_000)).build()) {
			AtomicLong highest = new AtomicLong();
			AtomicLong admitted = new AtomicLong();
			ExecutorService executor = Executors.newFixedThreadPool(8);
			try {
				List<Future<?>> runs = new ArrayList<>();
				for (int t = 0; t < 8; t++) {
					int thread = t;
					runs.add(executor.submit(() -> {
						for (int i = 0; i < 2_000; i++) {
							Permit permit = acquireSomehow(limiter, thread, i);
							if (permit.shed()) {
								continue;
							}
							admitted.incrementAndGet();
							highest.accumulateAndGet(limiter.inFlight(), Math::max);
							Thread.yield();
							permit.release((i % 5 == 0) ? Outcome.IGNORED : Outcome.SUCCEEDED);
						}
						return null;
					}));
				}
				for (Future<?> run : runs) {
					run.get(2, TimeUnit.MINUTES);
				}
			}
			finally {
				executor.shutdownNow();
			}
			assertThat(highest.get()).isLessThanOrEqualTo(limit);
			assertThat(admitted.get()).isPositive();
			assertThat(limiter.waiting()).isZero();
			assertThat(limiter.inFlight()).isZero();
			// every place is still there: the whole limit can be taken again
			for (int i = 0; i < limit; i++) {
				assertThat(limiter.tryAcquire(RequestPriority.CRITICAL).shed()).isFalse();
			}
		}
	}

	/** Blocking and asynchronous waits, plain admissions and cancellations, mixed. */
	private static Permit acquireSomehow(OverloadLimiter limiter, int thread, int i) {
		switch ((thread + i) % 4) {
			case 0:
				return limiter.acquire(RequestPriority.CRITICAL, 200_000);
			case 1: {
				CompletableFuture<Permit> future = limiter.acquireAsync(RequestPriority.CRITICAL);
				if (i % 3 == 0) {
					future.cancel(false);
				}
				try {
					return future.get(30, TimeUnit.SECONDS);
				}
				catch (Exception ex) {
					// cancelled: a place handed over meanwhile was given back by the limiter
					return Permit.SHED;
				}
			}
			case 2:
				return limiter.tryAcquire(RequestPriority.SHEDDABLE);
			default:
				return limiter.tryAcquire(RequestPriority.NORMAL);
		}
	}

	@Test
	void closingTurnsTheWaitersAwayAndLaterOnesAtOnce() {
		OverloadLimiter limiter = waiting(new RecordingLimit(1));
		Permit held = limiter.tryAcquire(RequestPriority.CRITICAL);
		CompletableFuture<Permit> waiter = limiter.acquireAsync(RequestPriority.CRITICAL);
		limiter.close();
		assertThat(waiter.join()).isSameAs(Permit.SHED);
		assertThat(limiter.acquireAsync(RequestPriority.CRITICAL).join()).isSameAs(Permit.SHED);
		assertThat(limiter.waiting()).isZero();
		held.release(Outcome.SUCCEEDED);
		assertThat(limiter.inFlight()).isZero();
	}

	private OverloadLimiter waiting(AdaptiveLimit algorithm) {
		return OverloadLimiter.builder(algorithm)
			.ticker(this.now::get)
			.criticalWait(Duration.ofNanos(WAIT))
			.timer(this.timer)
			.build();
	}

	/** Waits, bounded, until a thread has joined the queue: the test cannot go on before. */
	private static void awaitWaiting(OverloadLimiter limiter, int count) throws InterruptedException {
		for (int i = 0; i < 30_000 && limiter.waiting() < count; i++) {
			Thread.sleep(1);
		}
		assertThat(limiter.waiting()).isEqualTo(count);
	}

}
