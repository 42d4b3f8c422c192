package io.github.ratelimit.e2e;

import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import javax.sql.DataSource;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.test.context.ActiveProfiles;

import io.github.ratelimit.internal.jdbc.PostgresTestServer;
import io.github.ratelimit.store.RateLimitStore;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A service on the PostgreSQL store whose database is stopped and started again while it
 * serves: no request gets a 5xx, the fallback decides meanwhile, and decisions go back to
 * the database by themselves.
 */
@SpringBootTest(classes = { E2eApplication.class, JdbcOutageIntegrationTests.OwnDatabase.class },
		webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { "ratelimit.store=jdbc", "ratelimit.jdbc.initialize-schema=true", "ratelimit.jdbc.timeout=300ms",
				"ratelimit.jdbc.failure-threshold=2", "ratelimit.jdbc.probe-interval=200ms",
				"spring.main.allow-bean-definition-overriding=true" })
@ActiveProfiles("frontend")
class JdbcOutageIntegrationTests {

	/** A server of the test's own, which it stops and starts. */
	private static final PostgresTestServer SERVER = PostgresTestServer.create();

	@Configuration(proxyBeanMethods = false)
	static class OwnDatabase {

		@Bean
		DataSource dataSource() {
			return SERVER.newDataSource(8);
		}

	}

	@LocalServerPort
	int port;

	@Autowired
	RateLimitStore store;

	@AfterAll
	static void stopServer() {
		SERVER.close();
	}

	@Test
	void servesWithoutErrorsWhileTheDatabaseIsDownAndGoesBackToItWhenItReturns() {
		HttpTestClient http = new HttpTestClient(this.port);
		assertThat(http.get("/things/1").statusCode()).isEqualTo(200);
		assertThat(this.store.status().deciding()).isEqualTo("jdbc");
		SERVER.stop();
		try {
			List<Integer> statuses = new ArrayList<>();
			for (int i = 0; i < 6; i++) {
				statuses.add(http.get("/things/" + i).statusCode());
			}
			// the fallback enforces half of the limit of 5 on this instance: some 429s, never a 5xx
			assertThat(statuses).allMatch((status) -> status == 200 || status == 429).contains(200);
			assertThat(this.store.status().deciding()).isEqualTo("fallback");
		}
		finally {
			SERVER.start();
		}
		await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(50)).untilAsserted(() -> {
			HttpResponse<String> answer = http.get("/things/7");
			assertThat(answer.statusCode()).isLessThan(500);
			assertThat(this.store.status().deciding()).isEqualTo("jdbc");
		});
	}

}
