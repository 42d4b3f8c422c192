package io.github.ratelimit.e2e;

import java.time.Duration;
import java.util.List;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;

import io.github.ratelimit.internal.memory.InMemoryRateLimitStore;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Tenant headers from a hostile client, over real HTTP: {@code /tenant} allows 2 requests
 * an hour per tenant, and falls back to the client IP for values that are not tenant ids.
 * Headers up to 32 KB are accepted so that 10 KB values reach the limiter instead of being
 * refused by Tomcat.
 */
@SpringBootTest(classes = E2eApplication.class, webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { "server.max-http-request-header-size=32KB", "ratelimit.memory.maximum-keys=500" })
class HostileTenantIntegrationTests {

	private static final String TENANT = "X-Tenant-Id";

	@LocalServerPort
	int port;

	@Autowired
	InMemoryRateLimitStore store;

	HttpTestClient http;

	@BeforeEach
	void freshBuckets() {
		E2eApplication.advance(Duration.ofDays(3650));
		this.http = new HttpTestClient(this.port);
	}

	@Test
	void tenantValuesThatAreNotTenantIdsAreChargedToTheClientIp() {
		List<String> values = List.of("a".repeat(10_240), "{".repeat(10_240), "acme corp", "ac\tme", "{acme}", "a}b{c",
				"acme/admin", "acme:{x}", "tenant:acme}:x", "\u00e9lodie", "x".repeat(65));
		for (String value : values) {
			E2eApplication.advance(Duration.ofDays(1));
			assertThat(this.http.get("/tenant", TENANT, value).statusCode()).as(describe(value)).isEqualTo(200);
			assertThat(this.http.get("/tenant").statusCode()).as(describe(value)).isEqualTo(200);
			// the hostile value and no value at all drew from one bucket: the client IP's
			assertThat(this.http.get("/tenant", TENANT, value).statusCode()).as(describe(value)).isEqualTo(429);
		}
	}

	@Test
	void controlCharactersInTheTenantHeaderNeverFailTheRequest() {
		// Tomcat refuses most of them itself (400); whatever gets through is charged to the IP
		List<String> values = List.of("ac\u0000me", "ac\u0001me", "\u0007", "ac\u001bme", "ac\u007fme", "ac\rme",
				"acme\u0000{x}", "\u0008\u0008\u0008");
		for (String value : values) {
			E2eApplication.advance(Duration.ofDays(1));
			int status = this.http.rawGet("127.0.0.1", "/tenant", TENANT, value);
			assertThat(status).as(describe(value)).isIn(200, 400);
			if (status == 200) {
				assertThat(this.http.get("/tenant").statusCode()).as(describe(value)).isEqualTo(200);
				assertThat(this.http.get("/tenant").statusCode()).as(describe(value)).isEqualTo(429);
			}
		}
	}

	@Test
	void bytesBeyondAsciiInTheTenantHeaderAreChargedToTheClientIp() {
		for (String value : List.of("\u00ff\u00fe", "caf\u00e9", "acme\u00a0")) {
			E2eApplication.advance(Duration.ofDays(1));
			assertThat(this.http.rawGet("127.0.0.1", "/tenant", TENANT, value)).as(describe(value)).isEqualTo(200);
			assertThat(this.http.get("/tenant").statusCode()).as(describe(value)).isEqualTo(200);
			assertThat(this.http.rawGet("127.0.0.1", "/tenant", TENANT, value)).as(describe(value)).isEqualTo(429);
		}
	}

	@Test
	void newTenantOnEveryRequestKeepsTheStoreWithinItsBound() {
		// three times the bound; RateLimitAutoConfigurationTests sends 20,000 without HTTP
		for (int i = 0; i < 1_500; i++) {
			assertThat(this.http.get("/tenant", TENANT, "rotating-" + i).statusCode()).isEqualTo(200);
		}
		assertThat(this.store.size()).isBetween(1L, 500L);
	}

	private static String describe(String value) {
		StringBuilder text = new StringBuilder("tenant header '");
		for (int i = 0; i < Math.min(value.length(), 40); i++) {
			char c = value.charAt(i);
			text.append((c < 0x20 || c > 0x7e) ? String.format("\\u%04x", (int) c) : String.valueOf(c));
		}
		return text.append((value.length() > 40) ? "…' (" + value.length() + " chars)" : "'").toString();
	}

}
