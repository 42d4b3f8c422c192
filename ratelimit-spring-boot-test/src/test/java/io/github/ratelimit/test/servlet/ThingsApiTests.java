package io.github.ratelimit.test.servlet;

import java.time.Duration;

import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.resttestclient.autoconfigure.AutoConfigureRestTestClient;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.http.HttpStatus;
import org.springframework.test.web.servlet.client.RestTestClient;

import io.github.ratelimit.test.AutoConfigureRateLimitTest;
import io.github.ratelimit.test.TestRateLimitClock;

/**
 * The servlet application on a real server, called with {@code RestTestClient} as
 * "Testing your limits" ({@code docs/testing.md}) shows.
 */
@SpringBootTest(webEnvironment = WebEnvironment.RANDOM_PORT)
@AutoConfigureRestTestClient
@AutoConfigureRateLimitTest
class ThingsApiTests {

	@Autowired
	RestTestClient client;

	@Autowired
	TestRateLimitClock clock;

	@Test
	void rejectsTheSixthRequestUntilATokenIsBack() {
		for (int id = 1; id <= 5; id++) {
			this.client.get().uri("/things/{id}", id).exchange().expectStatus().isOk();
		}
		this.client.get()
			.uri("/things/6")
			.exchange()
			.expectStatus()
			.isEqualTo(HttpStatus.TOO_MANY_REQUESTS)
			.expectHeader()
			.valueEquals("Retry-After", "12");

		this.clock.advance(Duration.ofSeconds(12));
		this.client.get().uri("/things/7").exchange().expectStatus().isOk();
	}

}
