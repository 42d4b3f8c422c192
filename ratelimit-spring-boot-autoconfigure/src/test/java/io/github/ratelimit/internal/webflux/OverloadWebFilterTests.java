package io.github.ratelimit.internal.webflux;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Which raw paths the reactive overload filter treats as ambiguous: WebFlux routes on the
 * raw segments, where the decoded path the gate reads would show more of them.
 */
class OverloadWebFilterTests {

	@Test
	void aRawPathThatEncodesASeparatorIsAmbiguous() {
		assertThat(OverloadWebFilter.encodesSeparators("/api/x%2F..%2F..%2Factuator")).isTrue();
		assertThat(OverloadWebFilter.encodesSeparators("/actuator%2fhealth")).isTrue();
		assertThat(OverloadWebFilter.encodesSeparators("/api%5Cadmin")).isTrue();
		assertThat(OverloadWebFilter.encodesSeparators("/api/%2e%2e/actuator")).isTrue();
	}

	@Test
	void otherEncodingsAndPlainPathsAreNot() {
		assertThat(OverloadWebFilter.encodesSeparators("/api/caf%C3%A9")).isFalse();
		assertThat(OverloadWebFilter.encodesSeparators("/api/a%20b")).isFalse();
		assertThat(OverloadWebFilter.encodesSeparators("/api/orders/7")).isFalse();
		assertThat(OverloadWebFilter.encodesSeparators(null)).isFalse();
	}

}
