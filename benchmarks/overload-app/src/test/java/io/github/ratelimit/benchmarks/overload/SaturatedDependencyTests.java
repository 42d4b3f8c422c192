package io.github.ratelimit.benchmarks.overload;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The simulated dependency's processor sharing, on a clock the tests move.
 */
class SaturatedDependencyTests {

	private static final long MS = TimeUnit.MILLISECONDS.toNanos(1);

	private final AtomicLong now = new AtomicLong();

	private final SaturatedDependency dependency = new SaturatedDependency(Duration.ofMillis(20), 2, this.now::get);

	@Test
	void takesBaseAtOrBelowTheKnee() {
		SaturatedDependency.Call first = this.dependency.enter();
		SaturatedDependency.Call second = this.dependency.enter();
		assertThat(this.dependency.remainingNanos(first)).isEqualTo(20 * MS);
		this.now.addAndGet(15 * MS);
		assertThat(this.dependency.remainingNanos(second)).isEqualTo(5 * MS);
	}

	@Test
	void sharesItsCapacityPastTheKnee() {
		SaturatedDependency.Call[] calls = new SaturatedDependency.Call[4];
		for (int i = 0; i < calls.length; i++) {
			calls[i] = this.dependency.enter();
		}
		// four calls on a knee of two: each at half speed, 40 ms for 20 ms of work
		assertThat(this.dependency.remainingNanos(calls[0])).isEqualTo(40 * MS);
		this.now.addAndGet(20 * MS);
		assertThat(this.dependency.remainingNanos(calls[0])).isEqualTo(20 * MS);
	}

	@Test
	void speedsUpAsTheCrowdLeaves() {
		SaturatedDependency.Call[] calls = new SaturatedDependency.Call[4];
		for (int i = 0; i < calls.length; i++) {
			calls[i] = this.dependency.enter();
		}
		this.now.addAndGet(20 * MS);
		this.dependency.leave();
		this.dependency.leave();
		// 10 ms of work left, now at full speed
		assertThat(this.dependency.remainingNanos(calls[0])).isEqualTo(10 * MS);
		assertThat(this.dependency.inFlight()).isEqualTo(2);
	}

	@Test
	void finishesWhenItsWorkIsDone() {
		SaturatedDependency.Call call = this.dependency.enter();
		this.now.addAndGet(25 * MS);
		assertThat(this.dependency.remainingNanos(call)).isZero();
	}

}
