package io.github.ratelimit.internal.overload;

import java.time.Duration;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/**
 * What every algorithm does alike: bounds, drops, slow calls, a limit not in use.
 */
class AdaptiveLimitsTests {

	private static final long MS = 1_000_000L;

	@Test
	void vegasIsTheDefault() {
		assertThat(AdaptiveLimits.values()).containsExactly(AdaptiveLimits.VEGAS, AdaptiveLimits.GRADIENT2,
				AdaptiveLimits.AIMD);
	}

	@ParameterizedTest
	@EnumSource(AdaptiveLimits.class)
	void startsAtTheInitialLimit(AdaptiveLimits algorithm) {
		assertThat(algorithm.create(new LimitBounds(17, 1, 100), Duration.ZERO).limit()).isEqualTo(17);
	}

	@ParameterizedTest
	@EnumSource(AdaptiveLimits.class)
	void dropsLowerTheLimitDownToTheMinimum(AdaptiveLimits algorithm) {
		AdaptiveLimit limit = algorithm.create(new LimitBounds(100, 5, 200), Duration.ZERO);
		limit.onSample(0, 10 * MS, 100, 100, true);
		assertThat(limit.limit()).isEqualTo(90);
		for (int i = 1; i <= 100; i++) {
			limit.onSample(i * 10 * MS, 10 * MS, 50, 50, true);
		}
		assertThat(limit.limit()).isEqualTo(5);
	}

	@ParameterizedTest
	@EnumSource(AdaptiveLimits.class)
	void callsThatEndWellRaiseTheLimitUpToTheMaximum(AdaptiveLimits algorithm) {
		AdaptiveLimit limit = algorithm.create(new LimitBounds(10, 5, 50), Duration.ZERO);
		for (int i = 0; i < 10_000; i++) {
			limit.onSample(i * MS, 10 * MS, limit.limit(), limit.limit(), false);
		}
		assertThat(limit.limit()).isEqualTo(50);
	}

	@ParameterizedTest
	@EnumSource(AdaptiveLimits.class)
	void aCallSlowerThanTheThresholdCountsAsADrop(AdaptiveLimits algorithm) {
		AdaptiveLimit limit = algorithm.create(new LimitBounds(100, 1, 200), Duration.ofMillis(50));
		limit.onSample(0, 50 * MS, 100, 100, false);
		assertThat(limit.limit()).isGreaterThanOrEqualTo(100);
		limit.onSample(MS, 51 * MS, 100, 100, false);
		assertThat(limit.limit()).isLessThan(100);
	}

	@ParameterizedTest
	@EnumSource(AdaptiveLimits.class)
	void noThresholdMeansNoCallIsTooSlow(AdaptiveLimits algorithm) {
		AdaptiveLimit limit = algorithm.create(new LimitBounds(100, 1, 200), Duration.ZERO);
		limit.onSample(0, 60_000 * MS, 100, 100, false);
		assertThat(limit.limit()).isGreaterThanOrEqualTo(100);
	}

	@ParameterizedTest
	@EnumSource(AdaptiveLimits.class)
	void theFourArgumentSampleJudgesUseAgainstTheWholeLimit(AdaptiveLimits algorithm) {
		AdaptiveLimit limit = algorithm.create(new LimitBounds(100, 1, 200), Duration.ZERO);
		for (int i = 0; i < 100; i++) {
			limit.onSample(i * MS, 10 * MS, 49, false);
		}
		assertThat(limit.limit()).isEqualTo(100);
		limit.onSample(100 * MS, 10 * MS, 50, false);
		assertThat(limit.limit()).isGreaterThanOrEqualTo(100);
		limit.onSample(200 * MS, 10 * MS, 100, true);
		assertThat(limit.limit()).isLessThan(100);
	}

	@Test
	void aNegativeThresholdIsRejected() {
		assertThatIllegalArgumentException()
			.isThrownBy(() -> AdaptiveLimits.VEGAS.create(new LimitBounds(10, 1, 20), Duration.ofMillis(-1)))
			.withMessageContaining("slow-call");
	}

}
