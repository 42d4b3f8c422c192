package io.github.ratelimit.e2e;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;

import javax.sql.DataSource;

import org.junit.jupiter.api.Nested;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.test.context.ActiveProfiles;

import io.github.ratelimit.internal.core.RateLimitClock;
import io.github.ratelimit.internal.jdbc.PostgresTestServer;
import io.github.ratelimit.store.RateLimitStore;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The behaviour suite with the buckets in a real PostgreSQL ({@code ratelimit.store=jdbc}),
 * deciding at the tests' clock; {@link ReactiveJdbcFrontEndBehaviourTests} runs it on the
 * reactive front end.
 */
class JdbcFrontEndBehaviourTests {

	/** Time of the PostgreSQL suites: their own, as the other suites move their clocks. */
	static final AtomicLong NOW = new AtomicLong(1_700_000_000_000_000L);

	/** The application's own DataSource, on the tests' PostgreSQL server, and the suite's clock. */
	@Configuration(proxyBeanMethods = false)
	static class Database {

		@Bean
		RateLimitClock rateLimitClock() {
			return NOW::get;
		}

		@Bean
		DataSource dataSource() {
			return PostgresTestServer.shared().dataSource();
		}

	}

	@Nested
	@SpringBootTest(classes = { E2eApplication.class, Database.class }, webEnvironment = WebEnvironment.RANDOM_PORT,
			properties = { "ratelimit.store=jdbc", "ratelimit.jdbc.initialize-schema=true",
					"ratelimit.jdbc.table=servlet_suite_bucket", "ratelimit.jdbc.timeout=5s",
					"spring.main.allow-bean-definition-overriding=true" })
	@ActiveProfiles("frontend")
	class Servlet extends FrontEndBehaviourTests {

		@Autowired
		RateLimitStore store;

		@Override
		void advance(Duration duration) {
			assertThat(this.store.name()).isEqualTo("jdbc");
			NOW.addAndGet(duration.toNanos() / 1_000);
		}

	}

}
