package io.github.ratelimit.test.reactive;

import java.time.Duration;

import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.webflux.test.autoconfigure.WebFluxTest;
import org.springframework.http.HttpStatus;
import org.springframework.test.web.reactive.server.WebTestClient;

import io.github.ratelimit.test.AutoConfigureRateLimitTest;
import io.github.ratelimit.test.RateLimitDecisions;
import io.github.ratelimit.test.TestRateLimitClock;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A {@code @WebFluxTest} slice limits the controller per tenant, starts every test from
 * whole quotas, and moves time only when told; the tests run in a fixed order, each one
 * using up the quota the next one needs whole.
 */
@WebFluxTest(TenantGreetingApplication.TenantGreetingController.class)
@AutoConfigureRateLimitTest
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class WebFluxSliceTests {

	@Autowired
	private WebTestClient client;

	@Autowired
	private TestRateLimitClock clock;

	@Autowired
	private RateLimitDecisions decisions;

	@Test
	@Order(1)
	void rejectsATenantsThirdGreetingInARow() {
		greet("acme").expectStatus().isOk();
		greet("acme").expectStatus().isOk();
		greet("acme").expectStatus()
			.isEqualTo(HttpStatus.TOO_MANY_REQUESTS)
			.expectHeader()
			.valueEquals("Retry-After", "30");
		greet("globex").expectStatus().isOk();
		assertThat(this.decisions).hasRejected("tenant-greetings", "tenant:acme")
			.hasNotRejected("tenant-greetings", "tenant:globex");
	}

	@Test
	@Order(2)
	void startsFromAWholeQuotaAfterAnotherTestUsedItUp() {
		greet("acme").expectStatus().isOk();
		greet("acme").expectStatus().isOk();
		assertThat(this.decisions).hasNoRejections();
		greet("acme").expectStatus().isEqualTo(HttpStatus.TOO_MANY_REQUESTS);
	}

	@Test
	@Order(3)
	void admitsAgainOnceTheClockHasMovedOn() {
		greet("acme").expectStatus().isOk();
		greet("acme").expectStatus().isOk();
		greet("acme").expectStatus().isEqualTo(HttpStatus.TOO_MANY_REQUESTS);
		this.clock.advance(Duration.ofSeconds(29));
		greet("acme").expectStatus().isEqualTo(HttpStatus.TOO_MANY_REQUESTS);
		this.clock.advance(Duration.ofSeconds(1));
		greet("acme").expectStatus().isOk();
		greet("acme").expectStatus().isEqualTo(HttpStatus.TOO_MANY_REQUESTS);
	}

	private WebTestClient.ResponseSpec greet(String tenant) {
		return this.client.get().uri("/greetings").header("X-Tenant-Id", tenant).exchange();
	}

}
