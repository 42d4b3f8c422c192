package io.github.ratelimit.e2e;

import java.net.http.HttpResponse;
import java.time.Duration;

import org.junit.jupiter.api.Test;

import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.test.context.ActiveProfiles;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The behaviour suite on the servlet front end: Tomcat with Spring Security.
 */
@SpringBootTest(classes = E2eApplication.class, webEnvironment = WebEnvironment.RANDOM_PORT)
@ActiveProfiles("frontend")
class ServletFrontEndBehaviourTests extends FrontEndBehaviourTests {

	@Override
	void advance(Duration duration) {
		E2eApplication.advance(duration);
	}

	@Test
	void aHandlerSettlesWhatItReportsToTheCurrentUsage() {
		assertThat(this.http.get("/costs/current?estimate=400&used=40").statusCode()).isEqualTo(200);
		HttpResponse<String> next = this.http.get("/costs/current?estimate=1&used=1");
		assertThat(next.headers().firstValue("RateLimit"))
			.hasValueSatisfying((value) -> assertThat(value).startsWith("\"current-tokens\";r=959;"));
	}

}
