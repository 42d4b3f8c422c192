package io.github.ratelimit.test;

import java.time.Duration;
import java.time.Instant;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

class TestRateLimitClockTests {

	@Test
	void startsAtMidnightAndStandsStill() {
		TestRateLimitClock clock = new TestRateLimitClock();
		assertThat(clock.instant()).isEqualTo(Instant.parse("2026-01-01T00:00:00Z"));
		assertThat(clock.nowMicros()).isEqualTo(clock.nowMicros()).isEqualTo(1_767_225_600_000_000L);
	}

	@Test
	void advancesByWhatItIsToldAtMicrosecondPrecision() {
		TestRateLimitClock clock = new TestRateLimitClock(Instant.parse("2030-05-01T12:00:00Z"));
		long start = clock.nowMicros();
		clock.advance(Duration.ofSeconds(90)).advance(Duration.ofNanos(1_500));
		assertThat(clock.nowMicros() - start).isEqualTo(90_000_001L);
		assertThat(clock.instant()).isEqualTo(Instant.parse("2030-05-01T12:01:30.000001Z"));
	}

	@Test
	void resetReturnsToTheStart() {
		TestRateLimitClock clock = new TestRateLimitClock(Instant.parse("2030-05-01T12:00:00.25Z"));
		clock.advance(Duration.ofDays(3)).reset();
		assertThat(clock.instant()).isEqualTo(Instant.parse("2030-05-01T12:00:00.25Z"));
	}

	@Test
	void neverMovesBackwards() {
		TestRateLimitClock clock = new TestRateLimitClock();
		assertThatIllegalArgumentException().isThrownBy(() -> clock.advance(Duration.ofSeconds(-1)))
			.withMessage("duration must not be negative: PT-1S");
		assertThat(clock.instant()).isEqualTo(TestRateLimitClock.DEFAULT_START);
	}

}
