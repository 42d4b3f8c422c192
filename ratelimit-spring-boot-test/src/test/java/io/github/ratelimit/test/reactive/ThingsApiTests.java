package io.github.ratelimit.test.reactive;

import java.time.Duration;

import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.webtestclient.autoconfigure.AutoConfigureWebTestClient;
import org.springframework.http.HttpStatus;
import org.springframework.test.web.reactive.server.WebTestClient;

import io.github.ratelimit.test.AutoConfigureRateLimitTest;
import io.github.ratelimit.test.RateLimitDecisions;
import io.github.ratelimit.test.TestRateLimitClock;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The {@code WebTestClient} example of "Testing your limits" ({@code docs/testing.md}),
 * as written there, against the reactive application on a real server.
 */
@SpringBootTest(webEnvironment = WebEnvironment.RANDOM_PORT, properties = "spring.main.web-application-type=reactive")
@AutoConfigureWebTestClient
@AutoConfigureRateLimitTest
class ThingsApiTests {

	@Autowired
	WebTestClient client;

	@Autowired
	TestRateLimitClock clock;

	@Autowired
	RateLimitDecisions decisions;

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
		assertThat(this.decisions).hasRejected("GET /things/{id}", "ip:127.0.0.1");

		this.clock.advance(Duration.ofSeconds(12));
		this.client.get().uri("/things/7").exchange().expectStatus().isOk();
	}

}
