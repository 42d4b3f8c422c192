package io.github.ratelimit.internal.overload;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link Gradient2Limit}, fed samples on a virtual clock.
 */
class Gradient2LimitTests {

	private static final long MS = 1_000_000L;

	private final Gradient2Limit gradient = new Gradient2Limit(new LimitBounds(20, 1, 1000), 0);

	private long now;

	@Test
	void growsWhileLatencyHoldsSteady() {
		sample(500, 10 * MS, 20, 20);
		assertThat(this.gradient.limit()).isGreaterThan(30);
	}

	@Test
	void toleratesLatencyUpToHalfAgainItsLongTermLevel() {
		sample(1, 10 * MS, 20, 20);
		int before = this.gradient.limit();
		sample(100, 14 * MS, 20, 20);
		assertThat(this.gradient.limit()).isGreaterThan(before);
	}

	@Test
	void shrinksWhenLatencyRisesBeyondTheTolerance() {
		sample(100, 10 * MS, 20, 20);
		int learned = this.gradient.limit();
		sample(200, 30 * MS, learned, learned);
		assertThat(this.gradient.limit()).isLessThan(learned * 3 / 4);
	}

	@Test
	void doesNotGrowWhileTheLimitIsNotUsed() {
		sample(1_000, 10 * MS, 9, 20);
		assertThat(this.gradient.limit()).isEqualTo(20);
	}

	@Test
	void theLongTermLatencyFollowsAFallQuickly() {
		sample(1, 100 * MS, 1, 20);
		sample(50, 10 * MS, 1, 20);
		assertThat(this.gradient.longTermNanos()).isLessThan(20 * MS);
	}

	@Test
	void theLongTermLatencyRisesOverTheTimeConstant() {
		sample(1, 10 * MS, 1, 20);
		this.now += Gradient2Limit.LONG_TERM_NANOS;
		sample(1, 20 * MS, 1, 20);
		// one time constant: 1 - 1/e of the way
		assertThat(this.gradient.longTermNanos()).isBetween(16.0 * MS, 16.5 * MS);
	}

	@Test
	void aDropShrinksTheLimitByATenth() {
		Gradient2Limit gradient = new Gradient2Limit(new LimitBounds(100, 1, 1000), 0);
		gradient.onSample(0, 10 * MS, 100, 100, true);
		assertThat(gradient.limit()).isEqualTo(90);
	}

	private void sample(int count, long rtt, int inFlight, int ceiling) {
		for (int i = 0; i < count; i++) {
			this.gradient.onSample(this.now, rtt, inFlight, ceiling, false);
			this.now += MS;
		}
	}

}
