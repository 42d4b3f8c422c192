package io.github.ratelimit.e2e;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.test.context.ActiveProfiles;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What the adaptive limit learns from on Netty, with BlockHound watching the event loops.
 */
@SpringBootTest(classes = OverloadReactiveApplication.class, webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { "spring.main.web-application-type=reactive", "ratelimit.overload.initial-limit=20",
				"ratelimit.overload.min-limit=2", "ratelimit.overload.max-limit=20", "ratelimit.overload.shadow=true" })
@ActiveProfiles("overload")
class OverloadReactiveLearningTests extends OverloadLearningTests {

	@BeforeAll
	static void detectBlockingCalls() {
		OverloadBlockHound.install();
	}

	@Test
	void anErrorCarryingAClientErrorStatusLeavesTheLimitAlone() {
		int before = this.limiter.limit();
		assertThat(this.http.get("/missing").statusCode()).isEqualTo(404);
		assertThat(this.http.get("/quick").statusCode()).isEqualTo(200);
		OverloadClient.awaitInFlight(this.limiter::inFlight, 0);
		assertThat(this.limiter.limit()).isEqualTo(before);
	}

}
