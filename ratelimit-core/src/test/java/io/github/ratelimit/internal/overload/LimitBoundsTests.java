package io.github.ratelimit.internal.overload;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/**
 * {@link LimitBounds}: its checks name the setting that is wrong.
 */
class LimitBoundsTests {

	@Test
	void invalidBoundsNameTheirSetting() {
		assertThatIllegalArgumentException().isThrownBy(() -> new LimitBounds(1, 0, 10))
			.withMessage("min-limit must be at least 1: 0");
		assertThatIllegalArgumentException().isThrownBy(() -> new LimitBounds(5, 5, 4))
			.withMessage("max-limit must be at least min-limit (5): 4");
		assertThatIllegalArgumentException().isThrownBy(() -> new LimitBounds(11, 1, 10))
			.withMessage("initial-limit must be between min-limit and max-limit (1..10): 11");
		assertThatIllegalArgumentException().isThrownBy(() -> new LimitBounds(0, 1, 10))
			.withMessageContaining("initial-limit");
	}

	@Test
	void clampKeepsALimitInTheRange() {
		LimitBounds bounds = new LimitBounds(5, 2, 8);
		assertThat(bounds.clamp(1.5)).isEqualTo(2);
		assertThat(bounds.clamp(6.5)).isEqualTo(6.5);
		assertThat(bounds.clamp(9)).isEqualTo(8);
	}

}
