package io.github.ratelimit.e2e;

import java.net.http.HttpResponse;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.test.context.ActiveProfiles;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Overload protection on Tomcat, in front of Spring Security.
 */
@SpringBootTest(classes = OverloadServletApplication.class, webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { "ratelimit.overload.initial-limit=10", "ratelimit.overload.min-limit=10",
		"ratelimit.overload.max-limit=10",
				"ratelimit.overload.critical-wait=" + OverloadBehaviourTests.CRITICAL_WAIT })
@ActiveProfiles("overload")
class OverloadServletBehaviourTests extends OverloadBehaviourTests {

	@Test
	void anAsynchronousRequestHoldsItsPlaceUntilItCompletes() throws Exception {
		CompletableFuture<HttpResponse<String>> async = this.http.send("/async-held");
		// the chain returned when the handler started the request; it is still in flight
		OverloadClient.awaitInFlight(this.limiter::inFlight, 1);
		HeldCalls.open();
		assertThat(async.get(10, TimeUnit.SECONDS).body()).isEqualTo("async");
		OverloadClient.awaitInFlight(this.limiter::inFlight, 0);
	}

}
