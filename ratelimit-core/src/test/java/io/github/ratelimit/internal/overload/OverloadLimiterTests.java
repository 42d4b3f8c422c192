package io.github.ratelimit.internal.overload;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicLong;

import org.junit.jupiter.api.Test;

import io.github.ratelimit.RequestPriority;
import io.github.ratelimit.internal.overload.OverloadLimiter.Outcome;
import io.github.ratelimit.internal.overload.OverloadLimiter.Permit;
import io.github.ratelimit.internal.overload.RecordingLimit.Sample;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/**
 * Admission by priority, release, shadow mode and the settings of {@link OverloadLimiter}.
 */
class OverloadLimiterTests {

	private final AtomicLong now = new AtomicLong(1_000);

	@Test
	void eachPriorityStopsAtItsShareOfTheLimit() {
		OverloadLimiter limiter = limiter(new RecordingLimit(10)).build();
		assertThat(limiter.ceiling(RequestPriority.CRITICAL)).isEqualTo(10);
		assertThat(limiter.ceiling(RequestPriority.NORMAL)).isEqualTo(8);
		assertThat(limiter.ceiling(RequestPriority.SHEDDABLE)).isEqualTo(7);
		assertThat(admitted(limiter, RequestPriority.SHEDDABLE, 20)).isEqualTo(7);
		assertThat(admitted(limiter, RequestPriority.NORMAL, 20)).isEqualTo(1);
		assertThat(admitted(limiter, RequestPriority.CRITICAL, 20)).isEqualTo(2);
		assertThat(limiter.inFlight()).isEqualTo(10);
		assertThat(limiter.shed(RequestPriority.SHEDDABLE)).isEqualTo(13);
		assertThat(limiter.shed(RequestPriority.NORMAL)).isEqualTo(19);
		assertThat(limiter.shed(RequestPriority.CRITICAL)).isEqualTo(18);
	}

	@Test
	void everyPriorityMayUseOneCallWhenTheLimitIsOne() {
		OverloadLimiter limiter = limiter(new RecordingLimit(1)).build();
		for (RequestPriority priority : RequestPriority.values()) {
			assertThat(limiter.ceiling(priority)).isOne();
		}
	}

	@Test
	void aShedPermitHasNothingToRelease() {
		OverloadLimiter limiter = limiter(new RecordingLimit(1)).build();
		Permit admitted = limiter.tryAcquire(RequestPriority.CRITICAL);
		Permit shed = limiter.tryAcquire(RequestPriority.CRITICAL);
		assertThat(admitted.shed()).isFalse();
		assertThat(admitted.overLimit()).isFalse();
		assertThat(shed).isSameAs(Permit.SHED);
		assertThat(shed.shed()).isTrue();
		assertThat(shed.overLimit()).isTrue();
		shed.release(Outcome.SUCCEEDED);
		assertThat(limiter.inFlight()).isOne();
	}

	@Test
	void releasingTwiceGivesThePlaceBackOnce() {
		RecordingLimit algorithm = new RecordingLimit(10);
		OverloadLimiter limiter = limiter(algorithm).build();
		Permit first = limiter.tryAcquire(RequestPriority.NORMAL);
		limiter.tryAcquire(RequestPriority.NORMAL);
		first.release(Outcome.SUCCEEDED);
		first.release(Outcome.DROPPED);
		first.release(Outcome.IGNORED);
		assertThat(limiter.inFlight()).isOne();
		assertThat(algorithm.samples).hasSize(1);
	}

	@Test
	void samplesCarryTheCallsTimingInFlightCountAndCeiling() {
		RecordingLimit algorithm = new RecordingLimit(10);
		OverloadLimiter limiter = limiter(algorithm).build();
		limiter.tryAcquire(RequestPriority.CRITICAL);
		Permit sheddable = limiter.tryAcquire(RequestPriority.SHEDDABLE);
		Permit critical = limiter.tryAcquire(RequestPriority.CRITICAL);
		this.now.addAndGet(25);
		sheddable.release(Outcome.SUCCEEDED);
		critical.release(Outcome.DROPPED);
		assertThat(algorithm.samples).containsExactly(new Sample(1_000, 25, 2, 7, false),
				new Sample(1_000, 25, 3, 10, true));
	}

	@Test
	void ignoredCallsFreeTheirPlaceWithoutTeachingTheLimit() {
		RecordingLimit algorithm = new RecordingLimit(2);
		OverloadLimiter limiter = limiter(algorithm).build();
		for (int i = 0; i < 100; i++) {
			Permit permit = limiter.tryAcquire(RequestPriority.CRITICAL);
			assertThat(permit.shed()).isFalse();
			this.now.addAndGet(1_000_000_000);
			permit.release(Outcome.IGNORED);
		}
		assertThat(limiter.inFlight()).isZero();
		assertThat(algorithm.samples).isEmpty();
	}

	@Test
	void ignoredCallsNeitherLowerNorRaiseALearnedLimit() {
		for (AdaptiveLimits kind : AdaptiveLimits.values()) {
			OverloadLimiter limiter = limiter(kind.create(new LimitBounds(20, 1, 100), java.time.Duration.ZERO)).build();
			for (int round = 0; round < 50; round++) {
				List<Permit> permits = new ArrayList<>();
				for (int i = 0; i < 20; i++) {
					permits.add(limiter.tryAcquire(RequestPriority.CRITICAL));
				}
				this.now.addAndGet((round % 2 == 0) ? 10_000_000 : 900_000_000);
				permits.forEach((permit) -> permit.release(Outcome.IGNORED));
			}
			assertThat(limiter.limit()).as(kind.name()).isEqualTo(20);
			assertThat(limiter.inFlight()).isZero();
		}
	}

	@Test
	void theLimitFollowsTheAlgorithmAfterASample() {
		RecordingLimit algorithm = new RecordingLimit(10);
		OverloadLimiter limiter = limiter(algorithm).build();
		Permit permit = limiter.tryAcquire(RequestPriority.NORMAL);
		algorithm.set(20);
		assertThat(limiter.limit()).isEqualTo(10);
		permit.release(Outcome.SUCCEEDED);
		assertThat(limiter.limit()).isEqualTo(20);
		assertThat(limiter.ceiling(RequestPriority.SHEDDABLE)).isEqualTo(14);
	}

	@Test
	void shadowModeAdmitsEveryCallAndCountsThoseOverTheLimit() {
		OverloadLimiter limiter = limiter(new RecordingLimit(10)).shadow(true).build();
		assertThat(limiter.shadow()).isTrue();
		List<Permit> permits = new ArrayList<>();
		for (int i = 0; i < 12; i++) {
			permits.add(limiter.tryAcquire(RequestPriority.SHEDDABLE));
		}
		assertThat(permits).noneMatch(Permit::shed);
		assertThat(permits.subList(0, 7)).noneMatch(Permit::overLimit);
		assertThat(permits.subList(7, 12)).allMatch(Permit::overLimit);
		assertThat(limiter.inFlight()).isEqualTo(12);
		assertThat(limiter.shed(RequestPriority.SHEDDABLE)).isEqualTo(5);
		assertThat(limiter.shed(RequestPriority.CRITICAL)).isZero();
		permits.forEach((permit) -> permit.release(Outcome.SUCCEEDED));
		assertThat(limiter.inFlight()).isZero();
	}

	@Test
	void aSuccessIsSkippedWhileAnotherThreadUpdatesTheLimitButADropWaits() throws Exception {
		CountDownLatch updating = new CountDownLatch(1);
		CountDownLatch finish = new CountDownLatch(1);
		RecordingLimit algorithm = new RecordingLimit(10) {

			@Override
			public void onSample(long startNanos, long rttNanos, int inFlight, int ceiling, boolean dropped) {
				super.onSample(startNanos, rttNanos, inFlight, ceiling, dropped);
				if (this.samples.size() == 1) {
					updating.countDown();
					await(finish);
				}
			}

		};
		OverloadLimiter limiter = limiter(algorithm).build();
		Permit slowUpdate = limiter.tryAcquire(RequestPriority.NORMAL);
		Permit skipped = limiter.tryAcquire(RequestPriority.NORMAL);
		Permit drop = limiter.tryAcquire(RequestPriority.NORMAL);
		Thread updater = new Thread(() -> slowUpdate.release(Outcome.SUCCEEDED));
		updater.start();
		updating.await();
		skipped.release(Outcome.SUCCEEDED);
		assertThat(limiter.skippedSamples()).isOne();
		assertThat(limiter.inFlight()).isOne();
		Thread dropper = new Thread(() -> drop.release(Outcome.DROPPED));
		dropper.start();
		finish.countDown();
		updater.join();
		dropper.join();
		assertThat(algorithm.samples).extracting(Sample::dropped).containsExactly(false, true);
		assertThat(limiter.inFlight()).isZero();
	}

	@Test
	void reservesMustLeaveAShareForSheddableCalls() {
		OverloadLimiterBuilder builder = OverloadLimiter.builder(new RecordingLimit(10));
		assertThatIllegalArgumentException().isThrownBy(() -> builder.reserves(-0.1, 0.1))
			.withMessageContaining("critical-reserve");
		assertThatIllegalArgumentException().isThrownBy(() -> builder.reserves(1.0, 0.0))
			.withMessageContaining("critical-reserve");
		assertThatIllegalArgumentException().isThrownBy(() -> builder.reserves(Double.NaN, 0.0))
			.withMessageContaining("critical-reserve");
		assertThatIllegalArgumentException().isThrownBy(() -> builder.reserves(0.2, -0.1))
			.withMessageContaining("normal-reserve");
		assertThatIllegalArgumentException().isThrownBy(() -> builder.reserves(0.5, 0.5))
			.withMessageContaining("normal-reserve")
			.withMessageContaining("critical-reserve (0.5)");
	}

	@Test
	void reservesSetTheCeilings() {
		OverloadLimiter limiter = limiter(new RecordingLimit(100)).reserves(0.5, 0.3).build();
		assertThat(limiter.ceiling(RequestPriority.CRITICAL)).isEqualTo(100);
		assertThat(limiter.ceiling(RequestPriority.NORMAL)).isEqualTo(50);
		assertThat(limiter.ceiling(RequestPriority.SHEDDABLE)).isEqualTo(20);
	}

	private OverloadLimiterBuilder limiter(AdaptiveLimit algorithm) {
		return OverloadLimiter.builder(algorithm).ticker(this.now::get);
	}

	private static int admitted(OverloadLimiter limiter, RequestPriority priority, int attempts) {
		int admitted = 0;
		for (int i = 0; i < attempts; i++) {
			if (!limiter.tryAcquire(priority).shed()) {
				admitted++;
			}
		}
		return admitted;
	}

	private static void await(CountDownLatch latch) {
		try {
			latch.await();
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}

}
