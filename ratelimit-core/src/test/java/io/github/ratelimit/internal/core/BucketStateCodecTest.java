package io.github.ratelimit.internal.core;

import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.Arrays;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.EnumSource;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.store.RateLimit;
import io.github.ratelimit.store.contract.MutableClock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/**
 * The binary layout of each algorithm's state: its sizes (a change of layout shows here)
 * and the rejection of bytes it did not write.
 */
class BucketStateCodecTest {

	private static final long NOW = MutableClock.DEFAULT_START_MICROS;

	/** Sizes of an empty state and of one that admitted three requests of cost 1. */
	@ParameterizedTest
	@CsvSource({ "TOKEN_BUCKET, 18, 18", "LEAKY_BUCKET, 18, 18", "FIXED_WINDOW, 26, 26",
			"SLIDING_WINDOW_LOG, 6, 54", "SLIDING_WINDOW_COUNTER, 26, 26", "CONCURRENCY, 6, 30" })
	void encodedSizes(Algorithm algorithm, int emptyBytes, int typicalBytes) {
		RateLimit limit = limit(algorithm);
		BucketState state = BucketState.create(limit);
		assertThat(BucketStateCodec.encode(state)).hasSize(emptyBytes);
		for (int i = 0; i < 3; i++) {
			assertThat(Requests.acquire(state, limit, NOW + i, 1).allowed()).isTrue();
		}
		byte[] bytes = BucketStateCodec.encode(state);
		assertThat(bytes).hasSize(typicalBytes);
		assertThat(bytes[0]).isEqualTo(BucketStateCodec.VERSION);
		assertThat(bytes[1]).isEqualTo(BucketStateCodec.code(algorithm));
		BucketState decoded = BucketStateCodec.decode(algorithm, bytes);
		assertThat(decoded.algorithm()).isEqualTo(algorithm);
		assertThat(decoded.check(limit, NOW + 3, 1)).isEqualTo(state.check(limit, NOW + 3, 1));
	}

	@Test
	void tokenBucketLayoutIsTheFullTimeThenTheInterval() {
		RateLimit limit = limit(Algorithm.TOKEN_BUCKET);
		BucketState state = BucketState.create(limit);
		Requests.acquire(state, limit, NOW, 1);
		byte[] bytes = BucketStateCodec.encode(state);
		long interval = limit.emissionIntervalMicros();
		assertThat(ByteBuffer.wrap(bytes, 2, 16).getLong()).isEqualTo(NOW + interval);
		assertThat(ByteBuffer.wrap(bytes, 10, 8).getLong()).isEqualTo(interval);
	}

	@Test
	void algorithmCodesAreDistinct() {
		assertThat(Arrays.stream(Algorithm.values()).map(BucketStateCodec::code).distinct())
			.hasSize(Algorithm.values().length);
	}

	@ParameterizedTest
	@EnumSource(Algorithm.class)
	void truncatedBytesAreRejected(Algorithm algorithm) {
		byte[] bytes = typical(algorithm);
		for (int length = 0; length < bytes.length; length++) {
			byte[] cut = Arrays.copyOf(bytes, length);
			assertThatIllegalArgumentException().as("%d of %d bytes", length, bytes.length)
				.isThrownBy(() -> BucketStateCodec.decode(algorithm, cut))
				.withMessageContaining(algorithm.name());
		}
	}

	@ParameterizedTest
	@EnumSource(Algorithm.class)
	void trailingBytesAreRejected(Algorithm algorithm) {
		byte[] bytes = Arrays.copyOf(typical(algorithm), typical(algorithm).length + 1);
		assertThatIllegalArgumentException().isThrownBy(() -> BucketStateCodec.decode(algorithm, bytes))
			.withMessageContaining("1 unread bytes");
	}

	@ParameterizedTest
	@EnumSource(Algorithm.class)
	void anUnknownVersionIsRejected(Algorithm algorithm) {
		byte[] bytes = typical(algorithm);
		bytes[0] = 2;
		assertThatIllegalArgumentException().isThrownBy(() -> BucketStateCodec.decode(algorithm, bytes))
			.withMessageContaining("unknown format version 2");
	}

	@Test
	void anotherAlgorithmsBytesAreRejected() {
		byte[] bytes = typical(Algorithm.FIXED_WINDOW);
		assertThatIllegalArgumentException()
			.isThrownBy(() -> BucketStateCodec.decode(Algorithm.SLIDING_WINDOW_COUNTER, bytes))
			.withMessageContaining("SLIDING_WINDOW_COUNTER")
			.withMessageContaining("algorithm code 3 (expected 5)");
	}

	@Test
	void aLeakyBucketIsNotReadAsATokenBucket() {
		byte[] bytes = typical(Algorithm.LEAKY_BUCKET);
		assertThatIllegalArgumentException().isThrownBy(() -> BucketStateCodec.decode(Algorithm.TOKEN_BUCKET, bytes))
			.withMessageContaining("algorithm code 2 (expected 1)");
	}

	@ParameterizedTest
	@EnumSource(value = Algorithm.class, names = { "SLIDING_WINDOW_LOG", "CONCURRENCY" })
	void aCountBeyondTheBytesIsRejectedWithoutAllocatingIt(Algorithm algorithm) {
		byte[] bytes = Arrays.copyOf(BucketStateCodec.encode(BucketState.create(limit(algorithm))), 6);
		bytes[2] = 0x7f;
		assertThatIllegalArgumentException().isThrownBy(() -> BucketStateCodec.decode(algorithm, bytes))
			.withMessageContaining("cut short");
		bytes[2] = (byte) 0xff;
		assertThatIllegalArgumentException().isThrownBy(() -> BucketStateCodec.decode(algorithm, bytes))
			.withMessageContaining("negative count");
	}

	private static byte[] typical(Algorithm algorithm) {
		RateLimit limit = limit(algorithm);
		BucketState state = BucketState.create(limit);
		for (int i = 0; i < 3; i++) {
			Requests.acquire(state, limit, NOW + i, 1);
		}
		return BucketStateCodec.encode(state);
	}

	private static RateLimit limit(Algorithm algorithm) {
		return new RateLimit("codec", algorithm, 10, 10, Duration.ofSeconds(1));
	}

}
