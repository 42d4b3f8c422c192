package io.github.ratelimit.internal.overload;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicLong;

import org.junit.jupiter.api.Test;

import io.github.ratelimit.RequestPriority;
import io.github.ratelimit.internal.overload.OverloadLimiter.Outcome;
import io.github.ratelimit.internal.overload.OverloadLimiter.Permit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Threads racing to acquire and release: the count never passes a priority's ceiling and
 * comes back to zero. Bounded in count (8 threads, 20,000 acquisitions each), not in time.
 */
class OverloadLimiterConcurrencyTests {

	private static final int THREADS = 8;

	private static final int ACQUISITIONS = 20_000;

	private static final RequestPriority[] PRIORITIES = RequestPriority.values();

	private static final Outcome[] OUTCOMES = Outcome.values();

	private final AtomicLong ticker = new AtomicLong();

	@Test
	void racingCallsNeverPassTheirPrioritysCeiling() throws Exception {
		OverloadLimiter limiter = OverloadLimiter.builder(new RecordingLimit(64) {

			@Override
			public void onSample(long startNanos, long rttNanos, int inFlight, int ceiling, boolean dropped) {
				// keeps nothing: 160,000 samples
			}

		}).ticker(this.ticker::incrementAndGet).build();
		AtomicIntegerArray highest = race(limiter, PRIORITIES, 80);
		assertThat(limiter.inFlight()).isZero();
		for (RequestPriority priority : PRIORITIES) {
			assertThat(highest.get(priority.ordinal())).as(priority.name())
				.isLessThanOrEqualTo(limiter.ceiling(priority));
		}
		// each thread alone holds more calls than the limit: sheddable calls are turned
		// away and critical ones use the reserve above them
		assertThat(limiter.shed(RequestPriority.SHEDDABLE)).isPositive();
		assertThat(highest.get(RequestPriority.CRITICAL.ordinal()))
			.isGreaterThan(limiter.ceiling(RequestPriority.SHEDDABLE));
	}

	@Test
	void racingSheddableCallsHeldAtTheirCeilingNeverPassIt() throws Exception {
		OverloadLimiter limiter = OverloadLimiter.builder(new RecordingLimit(64) {

			@Override
			public void onSample(long startNanos, long rttNanos, int inFlight, int ceiling, boolean dropped) {
			}

		}).ticker(this.ticker::incrementAndGet).build();
		// each thread alone wants more than the 44 sheddable places: the count sits at the
		// ceiling, where every acquisition races those of the other threads
		AtomicIntegerArray highest = race(limiter, new RequestPriority[] { RequestPriority.SHEDDABLE }, 48);
		assertThat(limiter.inFlight()).isZero();
		assertThat(highest.get(RequestPriority.SHEDDABLE.ordinal()))
			.isEqualTo(limiter.ceiling(RequestPriority.SHEDDABLE));
	}

	@Test
	void racingCallsUnderALearningLimitStayInItsBoundsAndReturnToZero() throws Exception {
		OverloadLimiter limiter = OverloadLimiter
			.builder(AdaptiveLimits.VEGAS.create(new LimitBounds(64, 8, 128), Duration.ofNanos(400)))
			.ticker(this.ticker::incrementAndGet)
			.build();
		AtomicIntegerArray highest = race(limiter, PRIORITIES, 80);
		assertThat(limiter.inFlight()).isZero();
		assertThat(limiter.limit()).isBetween(8, 128);
		for (RequestPriority priority : PRIORITIES) {
			assertThat(highest.get(priority.ordinal())).isLessThanOrEqualTo(128);
		}
	}

	@Test
	void aPermitReleasedByTwoThreadsAtOnceGivesItsPlaceBackOnce() throws Exception {
		OverloadLimiter limiter = OverloadLimiter.builder(new RecordingLimit(ACQUISITIONS))
			.ticker(this.ticker::incrementAndGet)
			.build();
		List<Permit> permits = new ArrayList<>();
		for (int i = 0; i < ACQUISITIONS; i++) {
			permits.add(limiter.tryAcquire(RequestPriority.CRITICAL));
		}
		// both threads release each permit at once: they meet at every permit before either
		// releases it
		AtomicInteger arrivals = new AtomicInteger();
		Callable<Void> releaseAll = () -> {
			for (int i = 0; i < permits.size(); i++) {
				arrivals.incrementAndGet();
				for (int spins = 1; arrivals.get() < 2 * (i + 1); spins++) {
					// two shared cores: let the other thread run if it was descheduled
					if (spins % 64 == 0) {
						Thread.yield();
					}
					else {
						Thread.onSpinWait();
					}
				}
				permits.get(i).release(Outcome.IGNORED);
			}
			return null;
		};
		ExecutorService executor = Executors.newFixedThreadPool(2);
		try {
			Future<Void> first = executor.submit(releaseAll);
			Future<Void> second = executor.submit(releaseAll);
			first.get();
			second.get();
		}
		finally {
			executor.shutdownNow();
		}
		assertThat(limiter.inFlight()).isZero();
	}

	/**
	 * Runs the threads: each acquires the priorities in turn and holds up to a number of
	 * calls, releasing the oldest (with an outcome in turn) when it holds that many or is
	 * turned away.
	 * @return the highest count seen at admission, by priority
	 */
	private static AtomicIntegerArray race(OverloadLimiter limiter, RequestPriority[] priorities, int hold)
			throws Exception {
		AtomicIntegerArray highest = new AtomicIntegerArray(RequestPriority.values().length);
		ExecutorService executor = Executors.newFixedThreadPool(THREADS);
		try {
			CyclicBarrier start = new CyclicBarrier(THREADS);
			List<Future<?>> runs = new ArrayList<>();
			for (int t = 0; t < THREADS; t++) {
				int offset = t;
				runs.add(executor.submit(() -> {
					ArrayDeque<Permit> held = new ArrayDeque<>();
					start.await();
					for (int i = 0; i < ACQUISITIONS; i++) {
						RequestPriority priority = priorities[(i + offset) % priorities.length];
						Permit permit = limiter.tryAcquire(priority);
						if (permit.shed() || held.size() == hold) {
							Permit oldest = held.poll();
							if (oldest != null) {
								oldest.release(OUTCOMES[i % OUTCOMES.length]);
							}
						}
						if (!permit.shed()) {
							highest.accumulateAndGet(priority.ordinal(), permit.inFlightAtStart(), Math::max);
							held.add(permit);
						}
					}
					held.forEach((permit) -> permit.release(Outcome.SUCCEEDED));
					return null;
				}));
			}
			for (Future<?> run : runs) {
				run.get();
			}
		}
		finally {
			executor.shutdownNow();
		}
		return highest;
	}

}
