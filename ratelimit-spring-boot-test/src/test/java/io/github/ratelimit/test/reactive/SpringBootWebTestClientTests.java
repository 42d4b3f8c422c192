package io.github.ratelimit.test.reactive;

import java.time.Duration;

import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

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
 * The whole reactive application on a real server: decisions made on the server's
 * threads are recorded, and buckets are forgotten between tests, which run in a fixed
 * order so that the second one would fail if the first one's bucket were kept.
 */
@SpringBootTest(webEnvironment = WebEnvironment.RANDOM_PORT, properties = "spring.main.web-application-type=reactive")
@AutoConfigureWebTestClient
@AutoConfigureRateLimitTest
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class SpringBootWebTestClientTests {

	@Autowired
	private WebTestClient client;

	@Autowired
	private TestRateLimitClock clock;

	@Autowired
	private RateLimitDecisions decisions;

	@Test
	@Order(1)
	void recordsWhatTheServerDecided() {
		greet("acme").expectStatus().isOk();
		greet("acme").expectStatus().isOk();
		greet("acme").expectStatus().isEqualTo(HttpStatus.TOO_MANY_REQUESTS);
		assertThat(this.decisions).hasRejected("tenant-greetings", "tenant:acme");
		assertThat(this.decisions.rejected()).singleElement()
			.satisfies((rejection) -> assertThat(rejection.retryAfter()).isEqualTo(Duration.ofSeconds(30)));
	}

	@Test
	@Order(2)
	void theNextTestFindsAWholeQuota() {
		greet("acme").expectStatus().isOk();
		this.clock.advance(Duration.ofSeconds(10));
		greet("acme").expectStatus().isOk();
		assertThat(this.decisions).hasNoRejections();
	}

	private WebTestClient.ResponseSpec greet(String tenant) {
		return this.client.get().uri("/greetings").header("X-Tenant-Id", tenant).exchange();
	}

}
