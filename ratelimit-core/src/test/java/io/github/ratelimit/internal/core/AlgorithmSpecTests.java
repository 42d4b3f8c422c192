package io.github.ratelimit.internal.core;

import java.time.Duration;
import java.util.Arrays;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.store.RateLimit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The registry of algorithms: one entry per algorithm, each creating the state of its own
 * algorithm and saying what it can do.
 */
class AlgorithmSpecTests {

	@Test
	void describesEveryAlgorithmOnceInTheOrderOfTheEnum() {
		assertThat(AlgorithmSpec.all()).extracting(AlgorithmSpec::algorithm).containsExactly(Algorithm.values());
	}

	@ParameterizedTest
	@EnumSource(Algorithm.class)
	void createsAFreshStateOfItsOwnAlgorithm(Algorithm algorithm) {
		AlgorithmSpec spec = AlgorithmSpec.of(algorithm);
		BucketState state = spec.newState();
		assertThat(state.algorithm()).isEqualTo(algorithm);
		assertThat(spec.newState()).isNotSameAs(state);
		assertThat(BucketState.create(RateLimit.of("orders", algorithm, 5, Duration.ofMinutes(1))).algorithm())
			.isEqualTo(algorithm);
	}

	@Test
	void giveEachAlgorithmItsOwnRedisCodeAndOneScriptFile() {
		assertThat(AlgorithmSpec.all()).extracting(AlgorithmSpec::redisCode).doesNotHaveDuplicates();
		assertThat(AlgorithmSpec.all()).extracting(AlgorithmSpec::redisScript)
			.doesNotHaveDuplicates()
			.allSatisfy((script) -> assertThat(script).matches("[a-z_]+\\.lua"));
		assertThat(AlgorithmSpec.all()).allSatisfy((spec) -> assertThat(spec.redisKeySuffixes()).first().isEqualTo(""));
		assertThat(AlgorithmSpec.of(Algorithm.SLIDING_WINDOW_LOG).redisKeySuffixes()).containsExactly("", ":sum");
	}

	@Test
	void onlyTheBucketsReserveSlotsAndArePacedByTheirEmissionInterval() {
		assertThat(Arrays.stream(Algorithm.values()).filter((a) -> AlgorithmSpec.of(a).reserves()))
			.containsExactly(Algorithm.TOKEN_BUCKET, Algorithm.LEAKY_BUCKET);
		assertThat(Arrays.stream(Algorithm.values()).filter((a) -> AlgorithmSpec.of(a).bucket()))
			.containsExactly(Algorithm.TOKEN_BUCKET, Algorithm.LEAKY_BUCKET);
		// 10 refilled per minute: a token every 6s
		RateLimit bucket = new RateLimit("orders", Algorithm.TOKEN_BUCKET, 5, 10, Duration.ofMinutes(1));
		assertThat(AlgorithmSpec.of(Algorithm.TOKEN_BUCKET).redisParameter(bucket)).isEqualTo(6_000_000);
		RateLimit window = RateLimit.of("orders", Algorithm.SLIDING_WINDOW_LOG, 5, Duration.ofMinutes(1));
		assertThat(AlgorithmSpec.of(Algorithm.SLIDING_WINDOW_LOG).redisParameter(window)).isEqualTo(60_000_000);
	}

	@Test
	void plansMayNotChangeThePeriodOfAlgorithmsWithAlignedWindows() {
		assertThat(Arrays.stream(Algorithm.values()).filter((a) -> AlgorithmSpec.of(a).windowsAligned()))
			.containsExactly(Algorithm.FIXED_WINDOW, Algorithm.SLIDING_WINDOW_COUNTER);
		assertThat(Arrays.stream(Algorithm.values()).filter((a) -> AlgorithmSpec.of(a).planMayChangePeriod()))
			.containsExactly(Algorithm.TOKEN_BUCKET, Algorithm.LEAKY_BUCKET, Algorithm.SLIDING_WINDOW_LOG);
	}

	@Test
	void forgetsABucketWhenItsStateNoLongerMatters() {
		// buckets: when full again; windows: one period, the counter two
		assertThat(new RateLimit("orders", Algorithm.TOKEN_BUCKET, 5, 10, Duration.ofMinutes(1)).idleTtlMicros())
			.isEqualTo(30_000_000);
		assertThat(new RateLimit("orders", Algorithm.LEAKY_BUCKET, 5, 10, Duration.ofMinutes(1)).idleTtlMicros())
			.isEqualTo(30_000_000);
		assertThat(RateLimit.of("orders", Algorithm.FIXED_WINDOW, 5, Duration.ofMinutes(1)).idleTtlMicros())
			.isEqualTo(60_000_000);
		assertThat(RateLimit.of("orders", Algorithm.SLIDING_WINDOW_LOG, 5, Duration.ofMinutes(1)).idleTtlMicros())
			.isEqualTo(60_000_000);
		assertThat(RateLimit.of("orders", Algorithm.SLIDING_WINDOW_COUNTER, 5, Duration.ofMinutes(1)).idleTtlMicros())
			.isEqualTo(120_000_000);
		assertThat(new RateLimit("orders", Algorithm.TOKEN_BUCKET, 5, 10, Duration.ofMinutes(1)).quotaWindowMicros())
			.isEqualTo(30_000_000);
		assertThat(RateLimit.of("orders", Algorithm.SLIDING_WINDOW_COUNTER, 5, Duration.ofMinutes(1))
			.quotaWindowMicros()).isEqualTo(60_000_000);
	}

}
