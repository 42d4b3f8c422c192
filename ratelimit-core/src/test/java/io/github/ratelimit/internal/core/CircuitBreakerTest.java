package io.github.ratelimit.internal.core;

import java.util.concurrent.atomic.AtomicLong;

import org.junit.jupiter.api.Test;

import io.github.ratelimit.internal.core.CircuitBreaker.State;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

class CircuitBreakerTest {

	private static final int THRESHOLD = 3;

	private static final long OPEN_NANOS = 5_000_000_000L;

	private final AtomicLong ticker = new AtomicLong(42);

	private final CircuitBreaker breaker = new CircuitBreaker(THRESHOLD, OPEN_NANOS, this.ticker::get);

	@Test
	void startsClosedAndLetsCallsThrough() {
		assertThat(this.breaker.state()).isEqualTo(State.CLOSED);
		assertThat(this.breaker.tryAcquirePermission()).isTrue();
		assertThat(this.breaker.nanosUntilProbe()).isZero();
	}

	@Test
	void opensAfterThresholdConsecutiveFailures() {
		assertThat(this.breaker.onFailure()).isFalse();
		assertThat(this.breaker.onFailure()).isFalse();
		assertThat(this.breaker.state()).isEqualTo(State.CLOSED);
		assertThat(this.breaker.onFailure()).as("the failure that opens it says so").isTrue();
		assertThat(this.breaker.state()).isEqualTo(State.OPEN);
	}

	@Test
	void aSuccessResetsTheFailureCount() {
		this.breaker.onFailure();
		this.breaker.onFailure();
		assertThat(this.breaker.onSuccess()).as("a closed breaker did not recover").isFalse();
		this.breaker.onFailure();
		this.breaker.onFailure();
		assertThat(this.breaker.state()).isEqualTo(State.CLOSED);
		assertThat(this.breaker.onFailure()).isTrue();
	}

	@Test
	void refusesCallsWhileOpen() {
		open();
		for (int i = 0; i < 10; i++) {
			this.ticker.addAndGet(OPEN_NANOS / 20);
			assertThat(this.breaker.tryAcquirePermission()).isFalse();
		}
		assertThat(this.breaker.state()).isEqualTo(State.OPEN);
	}

	@Test
	void letsExactlyOneProbeThroughAfterTheOpenTime() {
		open();
		this.ticker.addAndGet(OPEN_NANOS - 1);
		assertThat(this.breaker.tryAcquirePermission()).isFalse();
		this.ticker.addAndGet(1);
		assertThat(this.breaker.tryAcquirePermission()).as("the probe").isTrue();
		assertThat(this.breaker.state()).isEqualTo(State.HALF_OPEN);
		this.ticker.addAndGet(OPEN_NANOS * 10);
		assertThat(this.breaker.tryAcquirePermission()).as("others wait for the probe to report").isFalse();
		assertThat(this.breaker.tryAcquirePermission()).isFalse();
	}

	@Test
	void closesWhenTheProbeSucceeds() {
		open();
		this.ticker.addAndGet(OPEN_NANOS);
		assertThat(this.breaker.tryAcquirePermission()).isTrue();
		assertThat(this.breaker.onSuccess()).as("the store recovered").isTrue();
		assertThat(this.breaker.state()).isEqualTo(State.CLOSED);
		assertThat(this.breaker.tryAcquirePermission()).isTrue();
		assertThat(this.breaker.tryAcquirePermission()).isTrue();
		assertThat(this.breaker.nanosUntilProbe()).isZero();
	}

	@Test
	void aClosedBreakerNeedsTheFullThresholdAgainAfterRecovering() {
		open();
		this.ticker.addAndGet(OPEN_NANOS);
		this.breaker.tryAcquirePermission();
		this.breaker.onSuccess();
		for (int i = 1; i < THRESHOLD; i++) {
			assertThat(this.breaker.onFailure()).isFalse();
		}
		assertThat(this.breaker.state()).isEqualTo(State.CLOSED);
		assertThat(this.breaker.onFailure()).isTrue();
	}

	@Test
	void reopensForAnotherFullOpenTimeWhenTheProbeFails() {
		open();
		this.ticker.addAndGet(OPEN_NANOS);
		assertThat(this.breaker.tryAcquirePermission()).isTrue();
		assertThat(this.breaker.onFailure()).as("reopening is not a new opening").isFalse();
		assertThat(this.breaker.state()).isEqualTo(State.OPEN);
		assertThat(this.breaker.nanosUntilProbe()).isEqualTo(OPEN_NANOS);
		assertThat(this.breaker.tryAcquirePermission()).isFalse();
		this.ticker.addAndGet(OPEN_NANOS);
		assertThat(this.breaker.tryAcquirePermission()).as("the next probe").isTrue();
	}

	@Test
	void countsDownToTheProbe() {
		open();
		assertThat(this.breaker.nanosUntilProbe()).isEqualTo(OPEN_NANOS);
		this.ticker.addAndGet(2_000_000_000L);
		assertThat(this.breaker.nanosUntilProbe()).isEqualTo(OPEN_NANOS - 2_000_000_000L);
		this.ticker.addAndGet(OPEN_NANOS);
		assertThat(this.breaker.nanosUntilProbe()).as("overdue, never negative").isZero();
	}

	@Test
	void aLateSuccessOfACallLetThroughBeforeOpeningDoesNotSkipTheProbe() {
		// eight calls go out while closed; the first three fail and open the breaker
		for (int i = 0; i < 8; i++) {
			assertThat(this.breaker.tryAcquirePermission()).isTrue();
		}
		open();
		// a slow one of the others then succeeds: the breaker still waits for its probe,
		// otherwise a flapping store would open and close it (and log it) on every blip
		assertThat(this.breaker.onSuccess()).isFalse();
		assertThat(this.breaker.state()).isEqualTo(State.OPEN);
		assertThat(this.breaker.tryAcquirePermission()).isFalse();
	}

	@Test
	void rejectsInvalidSettings() {
		assertThatIllegalArgumentException().isThrownBy(() -> new CircuitBreaker(0, OPEN_NANOS))
			.withMessage("failureThreshold must be positive: 0");
		assertThatIllegalArgumentException().isThrownBy(() -> new CircuitBreaker(1, 0))
			.withMessage("openNanos must be positive: 0");
	}

	private void open() {
		for (int i = 0; i < THRESHOLD; i++) {
			this.breaker.onFailure();
		}
		assertThat(this.breaker.state()).isEqualTo(State.OPEN);
	}

}
