package io.github.ratelimit.e2e;

import java.net.http.HttpResponse;
import java.time.Duration;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;

import static org.assertj.core.api.Assertions.assertThat;

class HeaderStylesIntegrationTests {

	@BeforeEach
	void freshBuckets() {
		E2eApplication.advance(Duration.ofDays(3650));
	}

	@Nested
	@SpringBootTest(classes = E2eApplication.class, webEnvironment = WebEnvironment.RANDOM_PORT,
			properties = "ratelimit.headers=draft-06")
	class Draft06 {

		@LocalServerPort
		int port;

		@Test
		void writesLimitRemainingAndReset() {
			HttpResponse<String> response = new HttpTestClient(this.port).get("/things/1");
			assertThat(response.headers().firstValue("RateLimit-Limit")).hasValue("5");
			assertThat(response.headers().firstValue("RateLimit-Remaining")).hasValue("4");
			assertThat(response.headers().firstValue("RateLimit-Reset")).hasValue("12");
			assertThat(response.headers().firstValue("RateLimit")).isEmpty();
			assertThat(response.headers().firstValue("RateLimit-Policy")).isEmpty();
		}

	}

	@Nested
	@SpringBootTest(classes = E2eApplication.class, webEnvironment = WebEnvironment.RANDOM_PORT,
			properties = "ratelimit.headers=x-ratelimit")
	class XRateLimit {

		@LocalServerPort
		int port;

		@Test
		void writesTheMostRestrictiveLimit() {
			HttpTestClient http = new HttpTestClient(this.port);
			http.get("/combined");
			HttpResponse<String> rejected = http.get("/combined");
			assertThat(rejected.statusCode()).isEqualTo(429);
			assertThat(rejected.headers().firstValue("X-RateLimit-Limit")).hasValue("2");
			assertThat(rejected.headers().firstValue("X-RateLimit-Remaining")).hasValue("0");
			// one unit comes back after 30 minutes; the cost of 2 needs the whole hour
			assertThat(rejected.headers().firstValue("X-RateLimit-Reset")).hasValue("1800");
			assertThat(rejected.headers().firstValue("Retry-After")).hasValue("3600");
		}

	}

	@Nested
	@SpringBootTest(classes = E2eApplication.class, webEnvironment = WebEnvironment.RANDOM_PORT,
			properties = "ratelimit.headers=none")
	class NoHeaders {

		@LocalServerPort
		int port;

		@Test
		void writesOnlyRetryAfterOnRejection() {
			HttpTestClient http = new HttpTestClient(this.port);
			HttpResponse<String> allowed = http.get("/combined");
			assertThat(allowed.headers().map().keySet()).noneMatch((name) -> name.toLowerCase().contains("ratelimit"));
			HttpResponse<String> rejected = http.get("/combined");
			assertThat(rejected.statusCode()).isEqualTo(429);
			assertThat(rejected.headers().firstValue("Retry-After")).hasValue("3600");
			assertThat(rejected.headers().map().keySet()).noneMatch((name) -> name.toLowerCase().contains("ratelimit"));
		}

	}

}
