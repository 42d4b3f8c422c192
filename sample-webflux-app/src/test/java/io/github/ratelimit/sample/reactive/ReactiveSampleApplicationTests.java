package io.github.ratelimit.sample.reactive;

import java.nio.charset.StandardCharsets;
import java.util.Base64;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.http.HttpHeaders;
import org.springframework.test.web.reactive.server.WebTestClient;

/**
 * The reactive sample over HTTP, as the README walks through it.
 */
@SpringBootTest(webEnvironment = WebEnvironment.RANDOM_PORT)
class ReactiveSampleApplicationTests {

	@LocalServerPort
	int port;

	WebTestClient client;

	@BeforeEach
	void client() {
		this.client = WebTestClient.bindToServer().baseUrl("http://localhost:" + this.port).build();
	}

	@Test
	void ordersAreLimitedPerUserAndRouteTemplate() {
		for (int i = 1; i <= 10; i++) {
			this.client.get().uri("/api/orders/{id}", i).header(HttpHeaders.AUTHORIZATION, basic("alice", "alice-secret"))
				.exchange()
				.expectStatus().isOk()
				.expectHeader().valueEquals("RateLimit-Policy", "\"GET /api/orders/{id}\";q=10;w=60");
		}
		this.client.get().uri("/api/orders/11").header(HttpHeaders.AUTHORIZATION, basic("alice", "alice-secret"))
			.exchange()
			.expectStatus().isEqualTo(429)
			.expectHeader().exists("Retry-After")
			.expectHeader().contentType("application/problem+json")
			.expectBody(String.class).value((body) -> org.assertj.core.api.Assertions.assertThat(body)
				.contains("\"violated-policies\":[\"GET /api/orders/{id}\"]"));
		// bob has a bucket of his own
		this.client.get().uri("/api/orders/1").header(HttpHeaders.AUTHORIZATION, basic("bob", "bob-secret"))
			.exchange()
			.expectStatus().isOk();
	}

	@Test
	void placingOrdersFollowsThePolicyAndItsPlans() {
		for (int i = 0; i < 3; i++) {
			this.client.post().uri("/api/orders").header(HttpHeaders.AUTHORIZATION, basic("alice", "alice-secret"))
				.exchange()
				.expectStatus().isCreated();
		}
		this.client.post().uri("/api/orders").header(HttpHeaders.AUTHORIZATION, basic("alice", "alice-secret"))
			.exchange()
			.expectStatus().isEqualTo(429);
		this.client.post().uri("/api/orders").header(HttpHeaders.AUTHORIZATION, basic("bob", "bob-secret"))
			.exchange()
			.expectStatus().isCreated()
			.expectHeader().valueEquals("RateLimit-Policy", "\"orders-write\";q=10;w=50");
	}

	@Test
	void searchIsLimitedPerAddressBeforeAuthentication() {
		for (int i = 0; i < 5; i++) {
			this.client.get().uri("/api/search?q=x").exchange().expectStatus().isOk();
		}
		this.client.get().uri("/api/search?q=y").exchange().expectStatus().isEqualTo(429);
	}

	@Test
	void reactiveServiceLimitAnswers429ThroughItsHandler() {
		for (int i = 0; i < 3; i++) {
			this.client.get().uri("/api/quotes/ACME").header(HttpHeaders.AUTHORIZATION, basic("bob", "bob-secret"))
				.exchange()
				.expectStatus().isOk();
		}
		this.client.get().uri("/api/quotes/ACME").header(HttpHeaders.AUTHORIZATION, basic("bob", "bob-secret"))
			.exchange()
			.expectStatus().isEqualTo(429)
			.expectBody(String.class).value((body) -> org.assertj.core.api.Assertions.assertThat(body)
				.contains("\"violated-policies\":[\"quotes\"]"));
	}

	@Test
	void onlyAdminsReadAndResetLimitsThroughTheActuator() {
		String adminOrders = "/actuator/ratelimits?name=orders-write&identity=user:admin";
		this.client.get().uri("/actuator/ratelimits").exchange().expectStatus().isUnauthorized();
		this.client.get().uri("/actuator/ratelimits").header(HttpHeaders.AUTHORIZATION, basic("alice", "alice-secret"))
			.exchange()
			.expectStatus().isForbidden();
		this.client.get().uri("/actuator/ratelimits").header(HttpHeaders.AUTHORIZATION, basic("admin", "admin-secret"))
			.exchange()
			.expectStatus().isOk()
			.expectBody().jsonPath("$.limits[?(@.name == 'orders-write')]").exists()
			.jsonPath("$.overload.enabled").isEqualTo(true);

		for (int i = 0; i < 3; i++) {
			this.client.post().uri("/api/orders").header(HttpHeaders.AUTHORIZATION, basic("admin", "admin-secret"))
				.exchange()
				.expectStatus().isCreated();
		}
		this.client.post().uri("/api/orders").header(HttpHeaders.AUTHORIZATION, basic("admin", "admin-secret"))
			.exchange()
			.expectStatus().isEqualTo(429);

		this.client.delete().uri(adminOrders).exchange().expectStatus().isUnauthorized();
		this.client.delete().uri(adminOrders).header(HttpHeaders.AUTHORIZATION, basic("alice", "alice-secret"))
			.exchange()
			.expectStatus().isForbidden();
		// the refused resets left the bucket empty
		this.client.post().uri("/api/orders").header(HttpHeaders.AUTHORIZATION, basic("admin", "admin-secret"))
			.exchange()
			.expectStatus().isEqualTo(429);

		this.client.delete().uri(adminOrders).header(HttpHeaders.AUTHORIZATION, basic("admin", "admin-secret"))
			.exchange()
			.expectStatus().isOk()
			.expectBody().jsonPath("$.existed['orders-write']").isEqualTo(true);
		this.client.post().uri("/api/orders").header(HttpHeaders.AUTHORIZATION, basic("admin", "admin-secret"))
			.exchange()
			.expectStatus().isCreated();
	}

	@Test
	void healthIsUpWithoutRedis() {
		this.client.get().uri("/actuator/health").exchange().expectStatus().isOk()
			.expectBody(String.class).value((body) -> org.assertj.core.api.Assertions.assertThat(body).contains("UP"));
	}

	private static String basic(String user, String password) {
		return "Basic " + Base64.getEncoder().encodeToString((user + ":" + password).getBytes(StandardCharsets.UTF_8));
	}

}
