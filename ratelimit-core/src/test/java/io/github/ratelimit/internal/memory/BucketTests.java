package io.github.ratelimit.internal.memory;

import java.time.Duration;
import java.util.Random;

import org.junit.jupiter.api.Test;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.store.RateLimit;

import static org.assertj.core.api.Assertions.assertThat;

class BucketTests {

	@Test
	void levelsCountTheQuotaInUseInQuarters() {
		assertThat(Bucket.level(100, 100)).isEqualTo(Bucket.WHOLE);
		assertThat(Bucket.level(99, 100)).isEqualTo(1);
		assertThat(Bucket.level(76, 100)).isEqualTo(1);
		assertThat(Bucket.level(75, 100)).isEqualTo(2);
		assertThat(Bucket.level(50, 100)).isEqualTo(3);
		assertThat(Bucket.level(25, 100)).isEqualTo(4);
		assertThat(Bucket.level(1, 100)).isEqualTo(4);
		assertThat(Bucket.level(0, 100)).isEqualTo(Bucket.USED_UP);
		assertThat(Bucket.level(0, 1)).isEqualTo(Bucket.USED_UP);
		assertThat(Bucket.level(999_999_999_999L, 1_000_000_000_000L)).isEqualTo(1);
	}

	@Test
	void timeCodesKeepTheOrderOfDurationsAndRoundDownBySixtyFourthsAtMost() {
		Random random = new Random(42);
		for (int i = 0; i < 100_000; i++) {
			long a = random.nextLong() >>> (1 + random.nextInt(63));
			long b = random.nextLong() >>> (1 + random.nextInt(63));
			long shorter = Math.min(a, b);
			long longer = Math.max(a, b);
			assertThat(Bucket.timeCode(shorter)).isLessThanOrEqualTo(Bucket.timeCode(longer)).isBetween(0, 0xFFF);
			long decoded = Bucket.timeOf(Bucket.timeCode(shorter));
			if (shorter <= 1L << 55) {
				assertThat(decoded).isLessThanOrEqualTo(shorter).isGreaterThanOrEqualTo(shorter - shorter / 64);
			}
		}
		for (long micros = 0; micros < 64; micros++) {
			assertThat(Bucket.timeOf(Bucket.timeCode(micros))).isEqualTo(micros);
		}
	}

	@Test
	void remembersUntilWhenItsQuotaInUseStaysAsItIs() {
		RateLimit limit = RateLimit.of("orders", Algorithm.FIXED_WINDOW, 4, Duration.ofMinutes(1));
		Bucket bucket = new Bucket(0, limit, "alice");
		bucket.advanceTo(1_000_000);
		// three of four used, more in 30s
		bucket.remember(1_000_000, 1, 4, 30_000_000);
		assertThat(bucket.rankAt(1_000_000) >>> 12).isEqualTo(4);
		assertThat(bucket.rankAt(1_000_000)).isGreaterThan(bucket.rankAt(20_000_000));
		// remembered a little short (a 64th at most), never long
		assertThat(bucket.rankAt(1_000_000 + 29_500_000)).isPositive();
		assertThat(bucket.rankAt(31_000_000)).as("quota came back: only the state can tell").isNegative();
		bucket.remember(1_000_000, 4, 4, 0);
		assertThat(bucket.rankAt(1_000_000)).as("whole").isNegative();
	}

	@Test
	void keepsAsciiIdentitiesApartFromOthers() {
		RateLimit limit = RateLimit.of("orders", Algorithm.FIXED_WINDOW, 4, Duration.ofMinutes(1));
		Bucket ascii = new Bucket(0, limit, "user:jose");
		Bucket accented = new Bucket(0, limit, "user:jos\u00e9");
		assertThat(ascii.matches("orders", "user:jose")).isTrue();
		assertThat(ascii.matches("orders", "user:jos\u00e9")).isFalse();
		assertThat(ascii.matches("orders", "user:jos")).isFalse();
		assertThat(ascii.matches("search", "user:jose")).isFalse();
		assertThat(accented.matches("orders", "user:jos\u00e9")).isTrue();
		assertThat(accented.matches("orders", "user:jose")).isFalse();
		assertThat(ascii.sameKey(new Bucket(0, limit, "user:jose"))).isTrue();
		assertThat(ascii.sameKey(accented)).isFalse();
		assertThat(accented.sameKey(new Bucket(0, limit, "user:jos\u00e9"))).isTrue();
	}

}
