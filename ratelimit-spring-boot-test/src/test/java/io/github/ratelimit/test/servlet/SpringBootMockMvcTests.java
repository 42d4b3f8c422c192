package io.github.ratelimit.test.servlet;

import java.time.Duration;

import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.webmvc.test.autoconfigure.AutoConfigureMockMvc;
import org.springframework.http.HttpStatus;
import org.springframework.test.web.servlet.assertj.MockMvcTester;

import io.github.ratelimit.internal.core.RateLimitClock;
import io.github.ratelimit.test.AutoConfigureRateLimitTest;
import io.github.ratelimit.test.RateLimitDecisions;
import io.github.ratelimit.test.TestRateLimitClock;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * With the whole application ({@code @SpringBootTest}), the test clock replaces the
 * system clock and buckets are forgotten between tests, which run in a fixed order so
 * that the second one would fail if the first one's bucket were kept.
 */
@SpringBootTest
@AutoConfigureMockMvc
@AutoConfigureRateLimitTest
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class SpringBootMockMvcTests {

	@Autowired
	private MockMvcTester mvc;

	@Autowired
	private RateLimitClock rateLimitClock;

	@Autowired
	private RateLimitDecisions decisions;

	@Test
	@Order(1)
	void theApplicationDecidesOnTheTestClock() {
		assertThat(this.rateLimitClock).isInstanceOf(TestRateLimitClock.class);
		assertThat(this.mvc.get().uri("/greetings")).hasStatusOk();
		assertThat(this.mvc.get().uri("/greetings")).hasStatusOk();
		assertThat(this.mvc.get().uri("/greetings")).hasStatus(HttpStatus.TOO_MANY_REQUESTS);
		((TestRateLimitClock) this.rateLimitClock).advance(Duration.ofSeconds(59));
		assertThat(this.mvc.get().uri("/greetings")).hasStatus(HttpStatus.TOO_MANY_REQUESTS);
		((TestRateLimitClock) this.rateLimitClock).advance(Duration.ofSeconds(1));
		assertThat(this.mvc.get().uri("/greetings")).as("the next window").hasStatusOk();
	}

	@Test
	@Order(2)
	void theNextTestFindsAWholeQuota() {
		assertThat(this.mvc.get().uri("/greetings")).hasStatusOk();
		assertThat(this.mvc.get().uri("/greetings")).hasStatusOk();
		assertThat(this.decisions).hasNoRejections();
	}

}
