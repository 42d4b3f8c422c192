package io.github.ratelimit.internal.core;

import java.time.Duration;

import org.junit.jupiter.api.Test;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.store.Acquisition;
import io.github.ratelimit.store.BucketKey;
import io.github.ratelimit.store.RateLimit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.assertThatNullPointerException;

class AcquisitionTest {

	private static final RateLimit LIMIT = RateLimit.of("orders", Algorithm.TOKEN_BUCKET, 5, Duration.ofSeconds(1));

	@Test
	void drawsFromTheBucketOfItsLimitNameAndIdentity() {
		assertThat(new Acquisition(LIMIT, "alice", 1).key()).isEqualTo(new BucketKey("orders", "alice"));
	}

	@Test
	void rejectsZeroCost() {
		assertThatIllegalArgumentException().isThrownBy(() -> new Acquisition(LIMIT, "alice", 0))
			.withMessage("cost must be positive: 0");
	}

	@Test
	void rejectsNegativeCost() {
		assertThatIllegalArgumentException().isThrownBy(() -> new Acquisition(LIMIT, "alice", -2))
			.withMessage("cost must be positive: -2");
	}

	@Test
	void acceptsACostOfTheWholeCapacity() {
		assertThat(new Acquisition(LIMIT, "alice", 5).cost()).isEqualTo(5);
	}

	@Test
	void rejectsACostNoBucketCouldEverAdmit() {
		assertThatIllegalArgumentException().isThrownBy(() -> new Acquisition(LIMIT, "alice", 6))
			.withMessage("cost 6 exceeds the capacity 5 of limit 'orders'");
	}

	@Test
	void rejectsMissingValues() {
		assertThatNullPointerException().isThrownBy(() -> new Acquisition(null, "alice", 1))
			.withMessage("limit must not be null");
		assertThatNullPointerException().isThrownBy(() -> new Acquisition(LIMIT, null, 1))
			.withMessage("identity must not be null");
	}

	@Test
	void ordersBucketKeysByLimitNameThenIdentity() {
		assertThat(new BucketKey("a", "z")).isLessThan(new BucketKey("b", "a"));
		assertThat(new BucketKey("a", "a")).isLessThan(new BucketKey("a", "b"));
		assertThat(new BucketKey("a", "a")).isEqualByComparingTo(new BucketKey("a", "a"));
	}

}
