package io.github.ratelimit;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * The core's tests run as a plain Java user's application would: with no Spring, no
 * Lettuce and no Micrometer on the class path.
 */
class CoreClassPathTests {

	@Test
	void runsWithoutSpringOrAStoreTechnologyOnTheClassPath() {
		for (String absent : new String[] { "org.springframework.core.SpringVersion",
				"io.lettuce.core.RedisClient", "io.micrometer.core.instrument.MeterRegistry",
				"reactor.core.publisher.Mono" }) {
			assertThatExceptionOfType(ClassNotFoundException.class).as(absent)
				.isThrownBy(() -> Class.forName(absent, false, getClass().getClassLoader()));
		}
	}

}
