package io.github.ratelimit.internal.client;

import java.time.Duration;
import java.util.Set;

import org.junit.jupiter.api.Test;

import org.springframework.http.HttpMethod;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

class RetrySettingsTests {

	@Test
	void defaultsRetryIdempotentMethodsOn429And503() {
		RetrySettings settings = RetrySettings.defaults();
		assertThat(settings.maxAttempts()).isEqualTo(3);
		assertThat(settings.maxTotalTime()).isEqualTo(Duration.ofSeconds(30));
		assertThat(settings.initialDelay()).isEqualTo(Duration.ofMillis(100));
		assertThat(settings.maxDelay()).isEqualTo(Duration.ofSeconds(10));
		assertThat(settings.multiplier()).isEqualTo(2.0);
		assertThat(settings.methods()).containsExactlyInAnyOrder(HttpMethod.GET, HttpMethod.HEAD, HttpMethod.OPTIONS,
				HttpMethod.PUT, HttpMethod.DELETE, HttpMethod.TRACE);
		assertThat(settings.statuses()).containsExactlyInAnyOrder(429, 503);
	}

	@Test
	void rejectsValuesThatCannotWork() {
		RetrySettings defaults = RetrySettings.defaults();
		assertThatIllegalArgumentException().isThrownBy(() -> defaults.withMaxAttempts(0))
			.withMessage("maxAttempts must be at least 1: 0");
		assertThatIllegalArgumentException().isThrownBy(() -> defaults.withMaxTotalTime(Duration.ZERO))
			.withMessage("maxTotalTime must be positive: PT0S");
		assertThatIllegalArgumentException()
			.isThrownBy(() -> defaults.withBackOff(Duration.ofSeconds(2), Duration.ofSeconds(1), 2))
			.withMessageContaining("maxDelay must not be shorter than initialDelay");
		assertThatIllegalArgumentException()
			.isThrownBy(() -> defaults.withBackOff(Duration.ofSeconds(1), Duration.ofSeconds(1), 0.5))
			.withMessage("multiplier must be at least 1: 0.5");
		assertThatIllegalArgumentException().isThrownBy(() -> defaults.withMethods(Set.of()))
			.withMessage("methods must not be empty");
		assertThatIllegalArgumentException().isThrownBy(() -> defaults.withStatuses(Set.of(429, 200)))
			.withMessage("statuses must be error statuses (400 to 599): 200");
	}

}
