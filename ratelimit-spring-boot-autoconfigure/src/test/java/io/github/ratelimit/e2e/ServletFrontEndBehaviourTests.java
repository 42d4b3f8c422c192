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
	void aHandlerSettlesTheActualCostItReturnsOnlyForTheLimitsThatSettle() {
		HttpResponse<String> first = this.http.post("/completions?maxTokens=600&used=100", "");
		assertThat(first.statusCode()).isEqualTo(200);
		assertThat(first.body()).contains("\"totalTokens\":100");
		// the reservation is what the headers advertise while the call runs
		assertThat(String.join(", ", first.headers().allValues("RateLimit"))).contains("\"completion-tokens\";r=400;");
		// 900 left once settled: without the settlement 400 would refuse this estimate
		HttpResponse<String> second = this.http.post("/completions?maxTokens=800&used=50", "");
		assertThat(second.statusCode()).isEqualTo(200);
		HttpResponse<String> third = this.http.post("/completions?maxTokens=1&used=1", "");
		assertThat(String.join(", ", third.headers().allValues("RateLimit")))
			.contains("\"completion-tokens\";r=849;")
			.contains("\"completion-requests\";r=97;");
	}

	@Test
	void aHandlerSettlesTheActualCostOfItsResponseHeader() {
		assertThat(this.http.get("/costs/header?estimate=500&used=20").statusCode()).isEqualTo(200);
		HttpResponse<String> next = this.http.get("/costs/header?estimate=1&used=1");
		assertThat(next.headers().firstValue("RateLimit"))
			.hasValueSatisfying((value) -> assertThat(value).startsWith("\"header-tokens\";r=979;"));
	}

	@Test
	void aHandlerSettlesWhatItReportsToItsUsageParameter() {
		assertThat(this.http.get("/costs/reported?estimate=300&used=30").statusCode()).isEqualTo(200);
		HttpResponse<String> next = this.http.get("/costs/reported?estimate=1&used=1");
		assertThat(next.headers().firstValue("RateLimit"))
			.hasValueSatisfying((value) -> assertThat(value).startsWith("\"reported-tokens\";r=969;"));
	}

	@Test
	void anActualCostBeyondWhatIsLeftIsDebtUntilRefilled() {
		assertThat(this.http.get("/costs/reported?estimate=100&used=1500").statusCode()).isEqualTo(200);
		// 500 owed, refilled at 1000 an hour
		assertThat(this.http.get("/costs/reported?estimate=1&used=1").statusCode()).isEqualTo(429);
		advance(Duration.ofMinutes(29));
		assertThat(this.http.get("/costs/reported?estimate=1&used=1").statusCode()).isEqualTo(429);
		advance(Duration.ofMinutes(2));
		assertThat(this.http.get("/costs/reported?estimate=1&used=1").statusCode()).isEqualTo(200);
	}

	@Test
	void aHandlerSettlesWhatItReportsToTheCurrentUsage() {
		assertThat(this.http.get("/costs/current?estimate=400&used=40").statusCode()).isEqualTo(200);
		HttpResponse<String> next = this.http.get("/costs/current?estimate=1&used=1");
		assertThat(next.headers().firstValue("RateLimit"))
			.hasValueSatisfying((value) -> assertThat(value).startsWith("\"current-tokens\";r=959;"));
	}

}
