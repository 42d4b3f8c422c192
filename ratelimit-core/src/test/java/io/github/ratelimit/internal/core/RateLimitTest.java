package io.github.ratelimit.internal.core;

import java.time.Duration;
import java.time.ZoneId;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.CalendarPeriod;
import io.github.ratelimit.store.RateLimit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.assertThatNullPointerException;

class RateLimitTest {

	private static final Duration SECOND = Duration.ofSeconds(1);

	@Test
	void rejectsZeroCapacity() {
		assertThatIllegalArgumentException().isThrownBy(() -> RateLimit.of("a", Algorithm.TOKEN_BUCKET, 0, SECOND))
			.withMessage("capacity must be positive: 0");
	}

	@Test
	void rejectsNegativeCapacity() {
		assertThatIllegalArgumentException().isThrownBy(() -> RateLimit.of("a", Algorithm.FIXED_WINDOW, -3, SECOND))
			.withMessage("capacity must be positive: -3");
	}

	@Test
	void rejectsNegativeRefillTokens() {
		assertThatIllegalArgumentException()
			.isThrownBy(() -> new RateLimit("a", Algorithm.TOKEN_BUCKET, 10, -1, SECOND))
			.withMessage("refillTokens must not be negative: -1");
	}

	@Test
	void rejectsZeroPeriod() {
		assertThatIllegalArgumentException()
			.isThrownBy(() -> RateLimit.of("a", Algorithm.TOKEN_BUCKET, 10, Duration.ZERO))
			.withMessage("period must be positive: PT0S");
	}

	@Test
	void rejectsNegativePeriod() {
		assertThatIllegalArgumentException()
			.isThrownBy(() -> RateLimit.of("a", Algorithm.TOKEN_BUCKET, 10, Duration.ofSeconds(-1)))
			.withMessage("period must be positive: PT-1S");
	}

	@Test
	void rejectsPeriodBelowOneMillisecond() {
		assertThatIllegalArgumentException()
			.isThrownBy(() -> RateLimit.of("a", Algorithm.SLIDING_WINDOW_LOG, 10, Duration.ofNanos(999_999)))
			.withMessage("period must be at least 1ms: PT0.000999999S");
	}

	@Test
	void acceptsAPeriodOfOneMillisecond() {
		RateLimit limit = RateLimit.of("a", Algorithm.SLIDING_WINDOW_LOG, 10, Duration.ofMillis(1));
		assertThat(limit.periodMicros()).isEqualTo(1_000);
	}

	@Test
	void rejectsPeriodAboveOneHundredYears() {
		Duration tooLong = Duration.ofDays(365 * 100 + 1);
		assertThatIllegalArgumentException()
			.isThrownBy(() -> RateLimit.of("a", Algorithm.FIXED_WINDOW, 1, tooLong))
			.withMessage("period must be at most 100 years: " + tooLong);
	}

	@Test
	void rejectsBlankName() {
		assertThatIllegalArgumentException().isThrownBy(() -> RateLimit.of(" ", Algorithm.TOKEN_BUCKET, 1, SECOND))
			.withMessage("name must not be blank");
	}

	@Test
	void rejectsMissingValues() {
		assertThatNullPointerException().isThrownBy(() -> RateLimit.of(null, Algorithm.TOKEN_BUCKET, 1, SECOND))
			.withMessage("name must not be null");
		assertThatNullPointerException().isThrownBy(() -> RateLimit.of("a", null, 1, SECOND))
			.withMessage("algorithm must not be null");
		assertThatNullPointerException().isThrownBy(() -> RateLimit.of("a", Algorithm.TOKEN_BUCKET, 1, null))
			.withMessage("period must not be null");
	}

	@Test
	void rejectsABucketThatWouldTakeCenturiesToRefill() {
		assertThatIllegalArgumentException()
			.isThrownBy(() -> new RateLimit("a", Algorithm.TOKEN_BUCKET, 1_000_000, 1, Duration.ofDays(365)))
			.withMessageContaining("capacity 1000000")
			.withMessageContaining("longer than 285 years");
	}

	@Test
	void rejectsAWindowCapacityTooLargeToComputeExactly() {
		assertThatIllegalArgumentException()
			.isThrownBy(() -> RateLimit.of("a", Algorithm.SLIDING_WINDOW_COUNTER, 1L << 40, Duration.ofDays(1)))
			.withMessageContaining("capacity " + (1L << 40))
			.withMessageContaining("too large");
	}

	@Test
	void acceptsMillionsPerCalendarMonthAndPerWindow() {
		// a fixed window counts whole calls: no product of capacity and period to keep exact
		RateLimit month = RateLimit.calendar("tokens", 2_000_000_000L, CalendarPeriod.MONTH, ZoneId.of("Europe/Berlin"));
		assertThat(month.capacity()).isEqualTo(2_000_000_000L);
		assertThat(RateLimit.of("log", Algorithm.SLIDING_WINDOW_LOG, 5_000, Duration.ofDays(31)).capacity())
			.isEqualTo(5_000);
		assertThat(RateLimit.of("window", Algorithm.FIXED_WINDOW, 1L << 40, Duration.ofDays(365)).capacity())
			.isEqualTo(1L << 40);
	}

	@Test
	void refillTokensZeroMeansCapacity() {
		RateLimit limit = new RateLimit("a", Algorithm.TOKEN_BUCKET, 40, 0, Duration.ofMinutes(1));
		assertThat(limit.refillTokens()).isEqualTo(40);
		assertThat(limit).isEqualTo(RateLimit.of("a", Algorithm.TOKEN_BUCKET, 40, Duration.ofMinutes(1)));
	}

	@Test
	void ofRefillsTheCapacityEveryPeriod() {
		RateLimit limit = RateLimit.of("a", Algorithm.LEAKY_BUCKET, 7, SECOND);
		assertThat(limit.refillTokens()).isEqualTo(7);
	}

	@Test
	void emissionIntervalIsPeriodOverRefillTokens() {
		assertThat(new RateLimit("a", Algorithm.TOKEN_BUCKET, 10, 4, SECOND).emissionIntervalMicros())
			.isEqualTo(250_000);
	}

	@Test
	void emissionIntervalRoundsUpToAWholeMicrosecond() {
		assertThat(new RateLimit("a", Algorithm.TOKEN_BUCKET, 3, 3, SECOND).emissionIntervalMicros())
			.isEqualTo(333_334);
		assertThat(new RateLimit("a", Algorithm.TOKEN_BUCKET, 7, 7, Duration.ofMillis(1)).emissionIntervalMicros())
			.isEqualTo(143);
	}

	@Test
	void emissionIntervalIsAtLeastOneMicrosecond() {
		assertThat(new RateLimit("a", Algorithm.TOKEN_BUCKET, 1, 5_000, Duration.ofMillis(1)).emissionIntervalMicros())
			.isEqualTo(1);
	}

	@Test
	void periodMicrosDropsSubMicrosecondParts() {
		assertThat(RateLimit.of("a", Algorithm.FIXED_WINDOW, 1, Duration.ofNanos(1_000_999)).periodMicros())
			.isEqualTo(1_000);
	}

	@ParameterizedTest
	@EnumSource(value = Algorithm.class, names = { "TOKEN_BUCKET", "LEAKY_BUCKET" })
	void bucketsForgetTheirStateOnceFullAgain(Algorithm algorithm) {
		RateLimit limit = new RateLimit("a", algorithm, 10, 4, SECOND);
		assertThat(limit.idleTtlMicros()).isEqualTo(2_500_000);
		assertThat(limit.quotaWindowMicros()).isEqualTo(2_500_000);
	}

	@Test
	void windowsForgetTheirStateAfterThePeriodsTheyCount() {
		assertThat(RateLimit.of("a", Algorithm.FIXED_WINDOW, 10, SECOND).idleTtlMicros()).isEqualTo(1_000_000);
		assertThat(RateLimit.of("a", Algorithm.SLIDING_WINDOW_LOG, 10, SECOND).idleTtlMicros()).isEqualTo(1_000_000);
		assertThat(RateLimit.of("a", Algorithm.SLIDING_WINDOW_COUNTER, 10, SECOND).idleTtlMicros())
			.isEqualTo(2_000_000);
		assertThat(RateLimit.of("a", Algorithm.SLIDING_WINDOW_COUNTER, 10, SECOND).quotaWindowMicros())
			.isEqualTo(1_000_000);
	}

	@Test
	void idIsAShortStableDigestOfTheNameOnly() {
		RateLimit route = RateLimit.of("GET /api/orders/{id}", Algorithm.TOKEN_BUCKET, 10, SECOND);
		// the same in every instance and release: keys in Redis are named by it
		assertThat(route.id()).isEqualTo("aXm0nGFP");
		assertThat(RateLimit.of("orders", Algorithm.FIXED_WINDOW, 3, SECOND).id()).isEqualTo("HBaK2wDS");
		// a plan of the same policy: another capacity and rate, the same buckets
		assertThat(new RateLimit("GET /api/orders/{id}", Algorithm.TOKEN_BUCKET, 100, 50, Duration.ofMinutes(1)).id())
			.isEqualTo(route.id());
		assertThat(RateLimit.of("GET /api/orders/{id} (candidate)", Algorithm.TOKEN_BUCKET, 10, SECOND).id())
			.isNotEqualTo(route.id());
		assertThat(RateLimit.of("x}{evil", Algorithm.TOKEN_BUCKET, 10, SECOND).id()).matches("[A-Za-z0-9_-]{8}");
	}

}
