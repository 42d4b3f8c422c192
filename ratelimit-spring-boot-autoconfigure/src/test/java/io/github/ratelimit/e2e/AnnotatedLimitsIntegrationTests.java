package io.github.ratelimit.e2e;

import java.net.http.HttpResponse;
import java.time.Duration;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;

import io.github.ratelimit.RateLimitExceededException;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

@SpringBootTest(classes = E2eApplication.class, webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { "ratelimit.policies.tuned.capacity=3", "ratelimit.policies.shadowed.shadow=true",
				"ratelimit.policies.tuned.candidate.algorithm=sliding-window-log",
				"ratelimit.policies.tuned.candidate.capacity=1" })
class AnnotatedLimitsIntegrationTests {

	@LocalServerPort
	int port;

	@Autowired
	E2eApplication.Quotes quotes;

	HttpTestClient http;

	@BeforeEach
	void freshBuckets() {
		E2eApplication.advance(Duration.ofDays(3650));
		this.http = new HttpTestClient(this.port);
	}

	@Test
	void sixthRequestToOneRouteTemplateIsRejectedWhateverTheId() {
		for (int i = 1; i <= 5; i++) {
			assertThat(this.http.get("/things/" + i).statusCode()).isEqualTo(200);
		}
		HttpResponse<String> rejected = this.http.get("/things/6");
		assertThat(rejected.statusCode()).isEqualTo(429);
		assertThat(rejected.headers().firstValue("Retry-After")).hasValue("12");
		assertThat(rejected.headers().firstValue("Content-Type")).hasValueSatisfying(
				(type) -> assertThat(type).startsWith("application/problem+json"));
		assertThat(rejected.headers().firstValue("Cache-Control")).hasValue("no-store");
		assertThat(rejected.headers().firstValue("RateLimit-Policy")).hasValue("\"GET /things/{id}\";q=5;w=60");
		assertThat(rejected.headers().firstValue("RateLimit")).hasValue("\"GET /things/{id}\";r=0;t=12");
		assertThat(rejected.body()).contains("\"type\":\"https://iana.org/assignments/http-problem-types#quota-exceeded\"")
			.contains("\"status\":429")
			.contains("\"title\":")
			.contains("\"detail\":")
			.contains("\"violated-policies\":[\"GET /things/{id}\"]")
			.doesNotContain("things/6");
	}

	@Test
	void allowedResponsesCarryTheQuotaLeft() {
		HttpResponse<String> first = this.http.get("/things/a");
		assertThat(first.statusCode()).isEqualTo(200);
		assertThat(first.headers().firstValue("RateLimit-Policy")).hasValue("\"GET /things/{id}\";q=5;w=60");
		assertThat(first.headers().firstValue("RateLimit")).hasValue("\"GET /things/{id}\";r=4;t=12");
		E2eApplication.advance(Duration.ofSeconds(5));
		assertThat(this.http.get("/things/b").headers().firstValue("RateLimit"))
			.hasValue("\"GET /things/{id}\";r=3;t=7");
	}

	@Test
	void rejectionRefillsOverTime() {
		for (int i = 0; i < 5; i++) {
			this.http.get("/things/x");
		}
		assertThat(this.http.get("/things/x").statusCode()).isEqualTo(429);
		E2eApplication.advance(Duration.ofSeconds(12));
		assertThat(this.http.get("/things/x").statusCode()).isEqualTo(200);
		assertThat(this.http.get("/things/x").statusCode()).isEqualTo(429);
	}

	@Test
	void catchAllExceptionHandlerDoesNotSwallowTheRejection() {
		assertThat(this.http.get("/boom").body()).isEqualTo("caught IllegalStateException");
		for (int i = 0; i < 5; i++) {
			this.http.get("/things/1");
		}
		HttpResponse<String> rejected = this.http.get("/things/1");
		assertThat(rejected.statusCode()).isEqualTo(429);
		assertThat(rejected.body()).doesNotContain("caught");
	}

	@Test
	void policyInApplicationPropertiesOverridesTheAnnotation() {
		for (int i = 0; i < 3; i++) {
			HttpResponse<String> allowed = this.http.get("/tuned");
			assertThat(allowed.statusCode()).as("the candidate (capacity 1) never rejects").isEqualTo(200);
			assertThat(allowed.headers().firstValue("RateLimit-Policy")).as("candidates are not advertised")
				.hasValue("\"tuned\";q=3;w=3600");
		}
		HttpResponse<String> rejected = this.http.get("/tuned");
		assertThat(rejected.statusCode()).isEqualTo(429);
		assertThat(rejected.headers().firstValue("RateLimit-Policy")).hasValue("\"tuned\";q=3;w=3600");
	}

	@Test
	void repeatableLimitsKeyOnTheIpAndOnTheUsernameArgument() {
		assertThat(this.http.post("/login-attempt", "username=alice").statusCode()).isEqualTo(200);
		assertThat(this.http.post("/login-attempt", "username=alice").statusCode()).isEqualTo(200);
		HttpResponse<String> third = this.http.post("/login-attempt", "username=alice");
		assertThat(third.statusCode()).isEqualTo(429);
		assertThat(third.body()).contains("\"violated-policies\":[\"POST /login-attempt#2\"]");
		// the rejected attempt consumed nothing from the per-IP limit: one more username passes
		assertThat(this.http.post("/login-attempt", "username=bob").statusCode()).isEqualTo(200);
		HttpResponse<String> perIp = this.http.post("/login-attempt", "username=carol");
		assertThat(perIp.statusCode()).isEqualTo(429);
		assertThat(perIp.body()).contains("\"violated-policies\":[\"POST /login-attempt#1\"]");
	}

	@Test
	void limitsOfOneRequestAreAllOrNothing() {
		assertThat(this.http.get("/combined").statusCode()).isEqualTo(200);
		HttpResponse<String> rejected = this.http.get("/combined");
		assertThat(rejected.statusCode()).isEqualTo(429);
		assertThat(rejected.body()).contains("\"violated-policies\":[\"small\"]");
		assertThat(rejected.headers().firstValue("RateLimit")).hasValueSatisfying(
				(value) -> assertThat(value).contains("\"big\";r=9;"));
		// "big" paid only for the admitted request
		assertThat(this.http.get("/big-only").headers().firstValue("RateLimit")).hasValueSatisfying(
				(value) -> assertThat(value).startsWith("\"big\";r=8;"));
	}

	@Test
	void serviceBeanLimitBecomes429InsideAWebRequest() {
		assertThat(this.http.get("/quote").statusCode()).isEqualTo(200);
		assertThat(this.http.get("/quote").statusCode()).isEqualTo(200);
		HttpResponse<String> rejected = this.http.get("/quote");
		assertThat(rejected.statusCode()).isEqualTo(429);
		assertThat(rejected.body()).contains("\"violated-policies\":[\"quotes\"]");
	}

	@Test
	void serviceBeanLimitThrowsOutsideWebRequests() {
		this.quotes.next();
		this.quotes.next();
		assertThatExceptionOfType(RateLimitExceededException.class).isThrownBy(this.quotes::next)
			.satisfies((ex) -> {
				assertThat(ex.getRetryAfter()).isEqualTo(Duration.ofMinutes(30));
				assertThat(ex.getViolatedLimits()).containsExactly("quotes");
			});
	}

	@Test
	void principalKeyedLimitSeesTheAuthenticatedUser() {
		String[] alice = HttpTestClient.basic("alice", "alice-pw");
		String[] bob = HttpTestClient.basic("bob", "bob-pw");
		assertThat(this.http.get("/private/me", alice).body()).isEqualTo("alice");
		assertThat(this.http.get("/private/me", alice).statusCode()).isEqualTo(200);
		assertThat(this.http.get("/private/me", alice).statusCode()).isEqualTo(429);
		assertThat(this.http.get("/private/me", bob).statusCode()).isEqualTo(200);
	}

	@Test
	void principalsWhoseNamesWouldCollideWithoutSeparatorsOrBeyondSixtyFourCharactersHaveTheirOwnBuckets() {
		// were separators and braces stripped or replaced, or names cut at 64 characters,
		// a later user would find an earlier user's empty bucket and get 429 at once
		for (String user : E2eApplication.LOOKALIKE_USERS) {
			String[] credentials = HttpTestClient.basic(user, "pw");
			HttpResponse<String> first = this.http.get("/private/me", credentials);
			assertThat(first.statusCode()).as(user).isEqualTo(200);
			assertThat(first.body()).isEqualTo(user);
			assertThat(this.http.get("/private/me", credentials).statusCode()).as(user).isEqualTo(200);
			assertThat(this.http.get("/private/me", credentials).statusCode()).as(user).isEqualTo(429);
		}
		assertThat(this.http.get("/private/me", HttpTestClient.basic("bob", "bob-pw")).statusCode()).isEqualTo(200);
	}

	@Test
	void tenantKeyedLimitUsesValidTenantHeaders() {
		assertThat(this.http.get("/tenant", "X-Tenant-Id", "acme").statusCode()).isEqualTo(200);
		assertThat(this.http.get("/tenant", "X-Tenant-Id", "acme").statusCode()).isEqualTo(200);
		assertThat(this.http.get("/tenant", "X-Tenant-Id", "acme").statusCode()).isEqualTo(429);
		assertThat(this.http.get("/tenant", "X-Tenant-Id", "globex").statusCode()).isEqualTo(200);
	}

	@Test
	void invalidTenantHeaderFallsBackToTheClientIp() {
		assertThat(this.http.get("/tenant", "X-Tenant-Id", "bad tenant!").statusCode()).isEqualTo(200);
		assertThat(this.http.get("/tenant", "X-Tenant-Id", "other}bad{").statusCode()).isEqualTo(200);
		// both invalid values were the same client: its IP bucket is now empty
		assertThat(this.http.get("/tenant", "X-Tenant-Id", "x".repeat(500)).statusCode()).isEqualTo(429);
	}

	@Test
	void leakyBucketHoldsAdmittedRequestsUntilTheirDrainSlot() {
		assertThat(this.http.get("/leaky").statusCode()).isEqualTo(200);
		assertThat(this.http.get("/leaky").statusCode()).isEqualTo(200);
		long start = System.nanoTime();
		assertThat(this.http.get("/leaky").statusCode()).isEqualTo(200);
		assertThat(Duration.ofNanos(System.nanoTime() - start)).isGreaterThanOrEqualTo(Duration.ofMillis(95));
		HttpResponse<String> overflow = this.http.get("/leaky");
		assertThat(overflow.statusCode()).isEqualTo(429);
		assertThat(overflow.headers().firstValue("Retry-After")).hasValue("1");
	}

	@Test
	void handlerMappedToEveryMethodHasOneBucketForAllOfThem() {
		assertThat(this.http.get("/any-method").statusCode()).isEqualTo(200);
		HttpResponse<String> post = this.http.post("/any-method", "");
		assertThat(post.statusCode()).isEqualTo(200);
		assertThat(post.headers().firstValue("RateLimit")).hasValue("\"/any-method\";r=0;t=1800");
		assertThat(this.http.head("/any-method").statusCode()).isEqualTo(429);
		assertThat(this.http.get("/any-method").statusCode()).isEqualTo(429);
	}

	@Test
	void rejectedNestedCallDoesNotRefundTheHandlerThatRan() {
		assertThat(this.http.get("/outer").body()).isEqualTo("inner");
		assertThat(this.http.get("/outer").body()).isEqualTo("degraded");
		HttpResponse<String> third = this.http.get("/outer");
		assertThat(third.statusCode()).isEqualTo(429);
		assertThat(third.body()).contains("\"violated-policies\":[\"outer\"]");
	}

	@Test
	void rotatingTenantHeadersDoNotEscapeTheDefaultKey() {
		for (int i = 0; i < 5; i++) {
			assertThat(this.http.get("/things/" + i, "X-Tenant-Id", "tenant-" + i).statusCode()).isEqualTo(200);
		}
		assertThat(this.http.get("/things/5", "X-Tenant-Id", "tenant-new").statusCode()).isEqualTo(429);
	}

	@Test
	void headRequestsDrawFromTheGetBucket() {
		for (int i = 0; i < 3; i++) {
			assertThat(this.http.get("/things/" + i).statusCode()).isEqualTo(200);
		}
		HttpResponse<String> head = this.http.head("/things/9");
		assertThat(head.statusCode()).isEqualTo(200);
		assertThat(head.headers().firstValue("RateLimit")).hasValue("\"GET /things/{id}\";r=1;t=12");
		assertThat(this.http.head("/things/9").statusCode()).isEqualTo(200);
		assertThat(this.http.get("/things/10").statusCode()).isEqualTo(429);
	}

	@Test
	void argumentNamedRequestWinsOverTheRequestVariable() {
		assertThat(this.http.post("/argument-named-request", "username=alice").statusCode()).isEqualTo(200);
		assertThat(this.http.post("/argument-named-request", "username=alice").statusCode()).isEqualTo(200);
		assertThat(this.http.post("/argument-named-request", "username=alice").statusCode()).isEqualTo(429);
		assertThat(this.http.post("/argument-named-request", "username=bob").statusCode()).isEqualTo(200);
	}

	@Test
	void failingKeyExpressionFallsBackToTheKeyChainInsteadOfFailingTheRequest() {
		assertThat(this.http.get("/broken-expression").body()).isEqualTo("still served");
		assertThat(this.http.get("/broken-expression").statusCode()).isEqualTo(200);
		assertThat(this.http.get("/broken-expression").statusCode()).isEqualTo(429);
	}

	@Test
	void shadowPolicyNeverRejectsButAdvertisesWhatItWouldDo() {
		for (int i = 0; i < 2; i++) {
			assertThat(this.http.get("/shadowed").statusCode()).isEqualTo(200);
		}
		for (int i = 0; i < 3; i++) {
			HttpResponse<String> wouldReject = this.http.get("/shadowed");
			assertThat(wouldReject.statusCode()).isEqualTo(200);
			assertThat(wouldReject.body()).isEqualTo("shadowed");
			assertThat(wouldReject.headers().firstValue("RateLimit")).hasValueSatisfying(
					(value) -> assertThat(value).startsWith("\"shadowed\";r=0;"));
			assertThat(wouldReject.headers().firstValue("Retry-After")).isEmpty();
		}
	}

}
