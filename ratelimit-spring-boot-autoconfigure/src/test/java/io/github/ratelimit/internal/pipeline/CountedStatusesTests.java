package io.github.ratelimit.internal.pipeline;

import java.util.Arrays;
import java.util.List;

import org.junit.jupiter.api.Test;

import io.github.ratelimit.internal.core.CountedOutcomes;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/**
 * How {@code countStatuses} and {@code count-statuses} are read: codes and classes of
 * final HTTP statuses, nothing else.
 */
class CountedStatusesTests {

	@Test
	void readsCodesAndClassesIgnoringCaseAndBlanks() {
		CountedOutcomes statuses = CountedStatuses.parse(List.of("401", " 5XX "));
		assertThat(statuses.counts(401)).isTrue();
		assertThat(statuses.counts(403)).isFalse();
		assertThat(statuses.counts(500)).isTrue();
		assertThat(statuses.counts(599)).isTrue();
		assertThat(statuses.counts(600)).isFalse();
		assertThat(statuses.counts(200)).isFalse();
		assertThat(statuses.values()).containsExactly("401", "5xx");
	}

	@Test
	void countsEveryStatusWhenNoneIsNamed() {
		assertThat(CountedStatuses.parse(List.of())).isSameAs(CountedOutcomes.ALL);
		assertThat(CountedStatuses.parse(null)).isSameAs(CountedOutcomes.ALL);
	}

	@Test
	void refusesWhatIsNoStatusNamingIt() {
		for (String value : new String[] { "7xx", "600", "099", "abc", "", "4x", "40" }) {
			assertThatIllegalArgumentException().isThrownBy(() -> CountedStatuses.parse(List.of("200", value)))
				.withMessage("'" + value + "' is neither a status code from 100 to 599 nor a status class from 1xx to 5xx");
		}
		assertThatIllegalArgumentException().isThrownBy(() -> CountedStatuses.parse(Arrays.asList((String) null)))
			.withMessageContaining("'null' is neither");
	}

}
