package io.github.ratelimit.e2e;

import org.junit.jupiter.api.Test;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.test.context.ActiveProfiles;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What the adaptive limit learns from on Tomcat.
 */
@SpringBootTest(classes = OverloadServletApplication.class, webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { "ratelimit.overload.initial-limit=20", "ratelimit.overload.min-limit=2",
				"ratelimit.overload.max-limit=20", "ratelimit.overload.shadow=true" })
@ActiveProfiles("overload")
class OverloadServletLearningTests extends OverloadLearningTests {

	@Test
	void anAsynchronousTimeoutLowersTheLimit() {
		int before = this.limiter.limit();
		assertThat(this.http.get("/async-timeout").statusCode()).isEqualTo(503);
		awaitLimitBelow(before);
	}

}
