package io.github.ratelimit.sample;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Base64;

import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.webmvc.test.autoconfigure.AutoConfigureMockMvc;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.test.web.servlet.assertj.MockMvcTester;
import org.springframework.test.web.servlet.assertj.MvcTestResult;

import io.github.ratelimit.test.AutoConfigureRateLimitTest;
import io.github.ratelimit.test.RateLimitDecisions;
import io.github.ratelimit.test.TestRateLimitClock;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The order limits of the sample, tested as an application using the starter tests them:
 * with {@code ratelimit-spring-boot-test}, every test starts from whole quotas on a clock
 * that moves only when the test moves it, so each test may use the same users and limits.
 */
@SpringBootTest
@AutoConfigureMockMvc
@AutoConfigureRateLimitTest
class OrderLimitsTests {

	@Autowired
	private MockMvcTester mvc;

	@Autowired
	private TestRateLimitClock clock;

	@Autowired
	private RateLimitDecisions decisions;

	@Test
	void aliceOrdersThreeInABurstThenOneEveryTwentySeconds() {
		for (int i = 0; i < 3; i++) {
			assertThat(placeOrder("alice:alice-secret")).hasStatus(HttpStatus.CREATED);
		}
		assertThat(placeOrder("alice:alice-secret")).hasStatus(HttpStatus.TOO_MANY_REQUESTS)
			.headers()
			.hasValue("Retry-After", 20);
		assertThat(this.decisions).hasRejected("orders-write", "user:alice");
		this.clock.advance(Duration.ofSeconds(19));
		assertThat(placeOrder("alice:alice-secret")).hasStatus(HttpStatus.TOO_MANY_REQUESTS);
		this.clock.advance(Duration.ofSeconds(1));
		assertThat(placeOrder("alice:alice-secret")).hasStatus(HttpStatus.CREATED);
	}

	@Test
	void bobOnTheProPlanOrdersTenInABurst() {
		for (int i = 0; i < 10; i++) {
			assertThat(placeOrder("bob:bob-secret")).hasStatus(HttpStatus.CREATED);
		}
		assertThat(placeOrder("bob:bob-secret")).hasStatus(HttpStatus.TOO_MANY_REQUESTS)
			.headers()
			.hasValue("Retry-After", 5);
		assertThat(this.decisions).hasNotRejected("orders-write", "user:alice")
			.decisionsOf("orders-write")
			.hasSize(11);
	}

	private MvcTestResult placeOrder(String credentials) {
		String basic = Base64.getEncoder().encodeToString(credentials.getBytes(StandardCharsets.UTF_8));
		return this.mvc.post()
			.uri("/api/orders")
			.header("Authorization", "Basic " + basic)
			.contentType(MediaType.APPLICATION_JSON)
			.content("{\"item\":\"book\",\"quantity\":1}")
			.exchange();
	}

}
