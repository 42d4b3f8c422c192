package io.github.ratelimit.e2e;

import java.time.Duration;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.test.context.ActiveProfiles;

import io.github.ratelimit.store.RateLimitStore;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The behaviour suite on the reactive front end with the buckets in a real PostgreSQL, with
 * BlockHound watching the server's event loops: a decision that waited for JDBC on an event
 * loop would fail its request.
 */
@SpringBootTest(classes = { ReactiveE2eApplication.class, JdbcFrontEndBehaviourTests.Database.class },
		webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { "spring.main.web-application-type=reactive", "ratelimit.store=jdbc",
				"ratelimit.jdbc.initialize-schema=true", "ratelimit.jdbc.table=reactive_suite_bucket",
				"ratelimit.jdbc.timeout=5s", "spring.main.allow-bean-definition-overriding=true" })
@ActiveProfiles("frontend")
class ReactiveJdbcFrontEndBehaviourTests extends FrontEndBehaviourTests {

	@Autowired
	RateLimitStore store;

	@BeforeAll
	static void detectBlockingCalls() {
		ReactiveFrontEndBehaviourTests.detectBlockingCalls();
	}

	@BeforeEach
	void decidedByPostgres() {
		assertThat(this.store.name()).isEqualTo("jdbc");
	}

	@Override
	boolean releasesBeforeTheClientSeesTheAnswer() {
		return true;
	}

	@Override
	void advance(Duration duration) {
		JdbcFrontEndBehaviourTests.NOW.addAndGet(duration.toNanos() / 1_000);
	}

}
