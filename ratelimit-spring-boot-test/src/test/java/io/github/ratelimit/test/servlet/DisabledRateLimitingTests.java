package io.github.ratelimit.test.servlet;

import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.webmvc.test.autoconfigure.AutoConfigureMockMvc;
import org.springframework.context.ApplicationContext;
import org.springframework.test.web.servlet.assertj.MockMvcTester;

import io.github.ratelimit.internal.core.RateLimiter;
import io.github.ratelimit.test.AutoConfigureRateLimitTest;
import io.github.ratelimit.test.RateLimitDecisions;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code ratelimit.enabled=false} switches limiting off in a test, even with the test
 * support in place.
 */
@SpringBootTest(properties = "ratelimit.enabled=false")
@AutoConfigureMockMvc
@AutoConfigureRateLimitTest
class DisabledRateLimitingTests {

	@Autowired
	private MockMvcTester mvc;

	@Autowired
	private ApplicationContext context;

	@Autowired
	private RateLimitDecisions decisions;

	@Test
	void limitsNothing() {
		for (int i = 0; i < 5; i++) {
			assertThat(this.mvc.get().uri("/greetings")).hasStatusOk();
		}
		assertThat(this.context.getBeanProvider(RateLimiter.class).getIfAvailable()).isNull();
		assertThat(this.decisions.all()).isEmpty();
	}

}
