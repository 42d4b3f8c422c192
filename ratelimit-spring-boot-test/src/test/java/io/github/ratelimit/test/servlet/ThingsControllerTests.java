package io.github.ratelimit.test.servlet;

import java.time.Duration;

import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.webmvc.test.autoconfigure.WebMvcTest;
import org.springframework.http.HttpStatus;
import org.springframework.test.web.servlet.assertj.MockMvcTester;

import io.github.ratelimit.test.AutoConfigureRateLimitTest;
import io.github.ratelimit.test.RateLimitDecisions;
import io.github.ratelimit.test.TestRateLimitClock;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The MockMvc example of "Testing your limits" ({@code docs/testing.md}), as written
 * there.
 */
@WebMvcTest(ThingsController.class)
@AutoConfigureRateLimitTest
class ThingsControllerTests {

	@Autowired
	MockMvcTester mvc;

	@Autowired
	TestRateLimitClock clock;

	@Autowired
	RateLimitDecisions decisions;

	@Test
	void rejectsTheSixthRequestUntilATokenIsBack() {
		for (int id = 1; id <= 5; id++) {
			assertThat(this.mvc.get().uri("/things/{id}", id)).hasStatusOk();
		}
		assertThat(this.mvc.get().uri("/things/6")).hasStatus(HttpStatus.TOO_MANY_REQUESTS)
			.headers()
			.hasValue("Retry-After", 12);
		assertThat(this.decisions).hasRejected("GET /things/{id}", "ip:127.0.0.1");

		this.clock.advance(Duration.ofSeconds(12));
		assertThat(this.mvc.get().uri("/things/7")).hasStatusOk();
	}

}
