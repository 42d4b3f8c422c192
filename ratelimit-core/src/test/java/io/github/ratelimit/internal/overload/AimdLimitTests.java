package io.github.ratelimit.internal.overload;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/**
 * {@link AimdLimit}: one more per call that ends well, a tenth less per overload.
 */
class AimdLimitTests {

	private static final long MS = 1_000_000L;

	@Test
	void growsByOnePerCallWhileTheLimitIsUsed() {
		AimdLimit aimd = new AimdLimit(new LimitBounds(10, 1, 100), 0.9, 0);
		for (int i = 0; i < 5; i++) {
			aimd.onSample(i * MS, 1_000 * MS, 5, 10, false);
		}
		assertThat(aimd.limit()).isEqualTo(15);
		aimd.onSample(10 * MS, MS, 4, 10, false);
		assertThat(aimd.limit()).isEqualTo(15);
	}

	@Test
	void shrinksOnADropOrASlowCall() {
		AimdLimit aimd = new AimdLimit(new LimitBounds(100, 1, 100), 0.5, 20 * MS);
		aimd.onSample(0, MS, 100, 100, true);
		assertThat(aimd.limit()).isEqualTo(50);
		aimd.onSample(MS, 21 * MS, 50, 50, false);
		assertThat(aimd.limit()).isEqualTo(25);
	}

	@Test
	void theBackoffMustBeAFraction() {
		LimitBounds bounds = new LimitBounds(10, 1, 100);
		assertThatIllegalArgumentException().isThrownBy(() -> new AimdLimit(bounds, 1.0, 0))
			.withMessageContaining("backoff");
		assertThatIllegalArgumentException().isThrownBy(() -> new AimdLimit(bounds, 0.0, 0))
			.withMessageContaining("backoff");
	}

}
