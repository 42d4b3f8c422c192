package io.github.ratelimit.e2e;

import java.time.Duration;

import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.test.context.ActiveProfiles;

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

}
