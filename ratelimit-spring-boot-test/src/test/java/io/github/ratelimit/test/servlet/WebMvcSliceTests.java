package io.github.ratelimit.test.servlet;

import java.time.Duration;

import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.webmvc.test.autoconfigure.WebMvcTest;
import org.springframework.http.HttpStatus;
import org.springframework.test.web.servlet.assertj.MockMvcTester;

import io.github.ratelimit.test.AutoConfigureRateLimitTest;
import io.github.ratelimit.test.RateLimitDecisions;
import io.github.ratelimit.test.TestRateLimitClock;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A {@code @WebMvcTest} slice limits the controller as the application does, starts every
 * test from whole quotas, and moves time only when told. The tests run in a fixed order:
 * each one uses up the quota that the next one needs whole.
 */
@WebMvcTest(GreetingApplication.GreetingController.class)
@AutoConfigureRateLimitTest
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class WebMvcSliceTests {

	@Autowired
	private MockMvcTester mvc;

	@Autowired
	private TestRateLimitClock clock;

	@Autowired
	private RateLimitDecisions decisions;

	@Test
	@Order(1)
	void rejectsTheThirdGreetingOfAMinute() {
		assertThat(this.mvc.get().uri("/greetings")).hasStatusOk();
		assertThat(this.mvc.get().uri("/greetings")).hasStatusOk();
		assertThat(this.mvc.get().uri("/greetings")).hasStatus(HttpStatus.TOO_MANY_REQUESTS)
			.headers()
			.hasSingleValue("Retry-After", 60);
		assertThat(this.decisions).hasAllowed("greetings", "ip:127.0.0.1").hasRejected("greetings", "ip:127.0.0.1");
	}

	@Test
	@Order(2)
	void startsFromAWholeQuotaAfterAnotherTestUsedItUp() {
		assertThat(this.decisions.all()).as("decisions of the previous test are cleared").isEmpty();
		assertThat(this.clock.instant()).isEqualTo(TestRateLimitClock.DEFAULT_START);
		assertThat(this.mvc.get().uri("/greetings")).hasStatusOk();
		assertThat(this.mvc.get().uri("/greetings")).hasStatusOk();
		assertThat(this.mvc.get().uri("/greetings")).hasStatus(HttpStatus.TOO_MANY_REQUESTS);
		this.clock.advance(Duration.ofSeconds(59));
		assertThat(this.mvc.get().uri("/greetings")).as("a second before the refill")
			.hasStatus(HttpStatus.TOO_MANY_REQUESTS);
	}

	@Test
	@Order(3)
	void admitsAgainOnceTheClockHasMovedOn() {
		assertThat(this.mvc.get().uri("/greetings")).hasStatusOk();
		assertThat(this.mvc.get().uri("/greetings")).hasStatusOk();
		assertThat(this.mvc.get().uri("/greetings")).hasStatus(HttpStatus.TOO_MANY_REQUESTS);
		this.clock.advance(Duration.ofMinutes(1));
		assertThat(this.mvc.get().uri("/greetings")).hasStatusOk();
		assertThat(this.decisions).decisionsOf("greetings")
			.extracting((decision) -> decision.allowed())
			.containsExactly(true, true, false, true);
	}

}
