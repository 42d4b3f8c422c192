package io.github.ratelimit.e2e;

import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicReference;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import reactor.blockhound.BlockHound;
import reactor.blockhound.BlockingOperationError;
import reactor.core.scheduler.ReactorBlockHoundIntegration;

import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The reactive front end, over HTTP on a real Netty server with reactive Spring Security,
 * with BlockHound watching the server's event loops: any blocking call made while a
 * request is limited fails the request.
 */
@SpringBootTest(classes = ReactiveE2eApplication.class, webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { "spring.main.web-application-type=reactive", "ratelimit.routes[0].path=/routed/**",
				"ratelimit.routes[0].methods=GET", "ratelimit.routes[0].capacity=4", "ratelimit.routes[0].period=1h",
				"ratelimit.routes[0].key=ip", "ratelimit.routes[1].path=/private/**",
				"ratelimit.routes[1].methods=GET", "ratelimit.routes[1].capacity=6",
				"ratelimit.routes[1].period=1h", "ratelimit.routes[1].key=ip", "ratelimit.routes[2].path=/private/routed",
				"ratelimit.routes[2].capacity=2", "ratelimit.routes[2].period=1h", "ratelimit.routes[2].key=principal",
				"ratelimit.routes[3].path=/refund/*", "ratelimit.routes[3].capacity=5",
				"ratelimit.routes[3].period=1000h", "ratelimit.routes[3].key=ip",
				"ratelimit.policies.planned.plans.pro.capacity=3" })
class ReactiveFrontEndIntegrationTests {

	@LocalServerPort
	int port;

	HttpTestClient http;

	@BeforeAll
	static void detectBlockingCalls() {
		BlockHound.builder()
			.with(new ReactorBlockHoundIntegration())
			.nonBlockingThreadPredicate((current) -> current.or((thread) -> thread.getName().startsWith("reactor-http-")))
			.install();
	}

	@BeforeEach
	void freshBuckets() {
		ReactiveE2eApplication.advance(Duration.ofDays(3650 * 20));
		this.http = new HttpTestClient(this.port);
	}

	@Test
	void monoHandlerIsRejectedWithTheProblemAndHeadersOnItsSixthRequest() {
		for (int i = 1; i <= 5; i++) {
			HttpResponse<String> admitted = this.http.get("/things/" + i);
			assertThat(admitted.statusCode()).isEqualTo(200);
			assertThat(admitted.body()).isEqualTo("thing " + i);
			String remaining = "\"GET /things/{id}\";r=" + (5 - i) + ";t=";
			assertThat(admitted.headers().firstValue("RateLimit"))
				.hasValueSatisfying((value) -> assertThat(value).startsWith(remaining));
		}
		HttpResponse<String> rejected = this.http.get("/things/6");
		assertThat(rejected.statusCode()).isEqualTo(429);
		assertThat(rejected.headers().firstValue("Retry-After")).hasValue("12");
		assertThat(rejected.headers().firstValue("Content-Type")).hasValueSatisfying(
				(type) -> assertThat(type).startsWith("application/problem+json"));
		assertThat(rejected.headers().firstValue("Cache-Control")).hasValue("no-store");
		assertThat(rejected.headers().firstValue("RateLimit-Policy")).hasValue("\"GET /things/{id}\";q=5;w=60");
		assertThat(rejected.headers().firstValue("RateLimit")).hasValue("\"GET /things/{id}\";r=0;t=12");
		assertThat(rejected.body())
			.contains("\"type\":\"https://iana.org/assignments/http-problem-types#quota-exceeded\"")
			.contains("\"status\":429")
			.contains("\"violated-policies\":[\"GET /things/{id}\"]");
	}

	@Test
	void plainValueAndFluxHandlersAreLimitedOncePerRequest() {
		assertThat(this.http.get("/plain/1").body()).isEqualTo("plain 1");
		assertThat(this.http.get("/plain/2").statusCode()).isEqualTo(200);
		assertThat(this.http.get("/plain/3").statusCode()).isEqualTo(429);
		assertThat(this.http.get("/stream").statusCode()).isEqualTo(200);
		assertThat(this.http.get("/stream").statusCode()).isEqualTo(200);
		assertThat(this.http.get("/stream").statusCode()).isEqualTo(429);
	}

	@Test
	void headCountsAsGetAndPreflightIsNotLimited() {
		for (int i = 0; i < 5; i++) {
			assertThat(this.http.options("/things/1", "Origin", "https://example.com",
					"Access-Control-Request-Method", "GET").statusCode()).isNotEqualTo(429);
		}
		assertThat(this.http.head("/things/1").statusCode()).isEqualTo(200);
		for (int i = 0; i < 4; i++) {
			assertThat(this.http.get("/things/1").statusCode()).isEqualTo(200);
		}
		assertThat(this.http.head("/things/1").statusCode()).isEqualTo(429);
	}

	@Test
	void keyExpressionReadsRequestParametersAndLimitsEachUsernameApart() {
		assertThat(this.http.post("/login-attempt", "username=erin").statusCode()).isEqualTo(200);
		assertThat(this.http.post("/login-attempt", "username=erin").statusCode()).isEqualTo(200);
		HttpResponse<String> third = this.http.post("/login-attempt", "username=erin");
		assertThat(third.statusCode()).isEqualTo(429);
		assertThat(third.body()).contains("\"violated-policies\":[\"POST /login-attempt#2\"]");
		// the IP limit (3) still had room: the rejected request consumed nothing from it
		assertThat(this.http.post("/login-attempt", "username=frank").statusCode()).isEqualTo(200);
		assertThat(this.http.post("/login-attempt", "username=grace").statusCode()).isEqualTo(429);
	}

	@Test
	void severalLimitsAreAllOrNothing() {
		assertThat(this.http.get("/combined").statusCode()).isEqualTo(200);
		HttpResponse<String> rejected = this.http.get("/combined");
		assertThat(rejected.statusCode()).isEqualTo(429);
		assertThat(rejected.body()).contains("\"violated-policies\":[\"small\"]");
		// "big" gave back nothing it did not take: 10 - 1
		HttpResponse<String> bigOnly = this.http.get("/big-only");
		assertThat(bigOnly.headers().firstValue("RateLimit")).hasValueSatisfying(
				(value) -> assertThat(value).startsWith("\"big\";r=8;"));
	}

	@Test
	void principalKeyedLimitsUseTheReactiveSecurityPrincipal() {
		String[] alice = HttpTestClient.basic("alice", "alice-pw");
		String[] bob = HttpTestClient.basic("bob", "bob-pw");
		assertThat(this.http.get("/private/me", alice).body()).isEqualTo("alice");
		assertThat(this.http.get("/private/me", alice).statusCode()).isEqualTo(200);
		assertThat(this.http.get("/private/me", alice).statusCode()).isEqualTo(429);
		assertThat(this.http.get("/private/me", bob).statusCode()).isEqualTo(200);
	}

	@Test
	void plansComeFromTheReactiveSecurityPrincipal() {
		String[] bob = HttpTestClient.basic("bob", "bob-pw");
		String[] carol = HttpTestClient.basic("carol", "carol-pw");
		assertThat(this.http.get("/private/planned", bob).statusCode()).isEqualTo(200);
		assertThat(this.http.get("/private/planned", bob).statusCode()).isEqualTo(429);
		for (int i = 0; i < 3; i++) {
			HttpResponse<String> admitted = this.http.get("/private/planned", carol);
			assertThat(admitted.statusCode()).isEqualTo(200);
			assertThat(admitted.headers().firstValue("RateLimit-Policy"))
				.hasValueSatisfying((value) -> assertThat(value).contains("\"planned\";q=3;w=3600"));
		}
		assertThat(this.http.get("/private/planned", carol).statusCode()).isEqualTo(429);
	}

	@Test
	void routeLimitsHoldForRequestsSecurityAnswersItself() {
		String[] wrong = HttpTestClient.basic("alice", "wrong");
		for (int i = 0; i < 6; i++) {
			assertThat(this.http.get("/private/guarded-" + i, wrong).statusCode()).isEqualTo(401);
		}
		HttpResponse<String> rejected = this.http.get("/private/me", wrong);
		assertThat(rejected.statusCode()).isEqualTo(429);
		assertThat(rejected.body()).contains("\"violated-policies\":[\"GET /private/**\"]");
	}

	@Test
	void routeLimitsUseTheRouteTemplateNotTheRawPath() {
		for (int i = 1; i <= 4; i++) {
			assertThat(this.http.get("/routed/" + i).statusCode()).isEqualTo(200);
		}
		HttpResponse<String> rejected = this.http.get("/routed/5");
		assertThat(rejected.statusCode()).isEqualTo(429);
		assertThat(rejected.headers().firstValue("RateLimit-Policy")).hasValue("\"GET /routed/**\";q=4;w=3600");
		// dot segments and doubled slashes do not slip past the pattern (the server may refuse them outright)
		assertThat(this.http.get("//routed/./6").statusCode()).isIn(400, 429);
	}

	@Test
	void principalKeyedRouteLimitsWaitForAuthentication() {
		String[] alice = HttpTestClient.basic("alice", "alice-pw");
		String[] bob = HttpTestClient.basic("bob", "bob-pw");
		assertThat(this.http.get("/private/routed", alice).body()).isEqualTo("alice");
		assertThat(this.http.get("/private/routed", alice).statusCode()).isEqualTo(200);
		HttpResponse<String> rejected = this.http.get("/private/routed", alice);
		assertThat(rejected.statusCode()).isEqualTo(429);
		assertThat(rejected.body()).contains("\"violated-policies\":[\"/private/routed\"]");
		assertThat(this.http.get("/private/routed", bob).statusCode()).isEqualTo(200);
	}

	@Test
	void handlerRejectionGivesBackWhatTheRouteStageTook() {
		assertThat(this.http.get("/refund/1").statusCode()).isEqualTo(200);
		for (int i = 2; i <= 4; i++) {
			assertThat(this.http.get("/refund/" + i).statusCode()).isEqualTo(429);
		}
		// the route limit (5) was charged once, by the admitted request: four left
		ReactiveE2eApplication.advance(Duration.ofHours(2));
		HttpResponse<String> admitted = this.http.get("/refund/5");
		assertThat(admitted.statusCode()).isEqualTo(200);
		assertThat(admitted.headers().firstValue("RateLimit")).hasValueSatisfying(
				(value) -> assertThat(value).contains("\"/refund/*\";r=3;"));
	}

	@Test
	void serviceBeanRejectionBecomesA429DespiteTheCatchAllHandler() {
		assertThat(this.http.get("/quote").body()).isEqualTo("quote");
		assertThat(this.http.get("/quote").body()).isEqualTo("quote");
		HttpResponse<String> rejected = this.http.get("/quote");
		assertThat(rejected.statusCode()).isEqualTo(429);
		assertThat(rejected.body()).contains("\"violated-policies\":[\"quotes\"]");
	}

	@Test
	void waitingHandlerIsDelayedNotRejected() {
		assertThat(this.http.get("/patient").statusCode()).isEqualTo(200);
		// the bucket is empty: the second request reserves the next slot, 100 ms ahead, and is served then
		long start = System.nanoTime();
		HttpResponse<String> delayed = this.http.get("/patient");
		long waitedMillis = (System.nanoTime() - start) / 1_000_000;
		assertThat(delayed.statusCode()).isEqualTo(200);
		assertThat(delayed.body()).isEqualTo("patient");
		assertThat(waitedMillis).isGreaterThanOrEqualTo(90);
	}

	@Test
	void blockingCallOnAServerEventLoopThreadIsDetected() throws InterruptedException {
		AtomicReference<Throwable> failure = new AtomicReference<>();
		Thread eventLoop = new Thread(() -> {
			try {
				Thread.sleep(1);
			}
			catch (Throwable ex) {
				failure.set(ex);
			}
		}, "reactor-http-nio-probe");
		eventLoop.start();
		eventLoop.join(10_000);
		assertThat(failure.get()).isInstanceOf(BlockingOperationError.class);
	}

	@Test
	void leakyBucketDelaysRequestsToTheirDrainSlot() {
		for (int i = 0; i < 3; i++) {
			assertThat(this.http.get("/leaky").statusCode()).isEqualTo(200);
		}
		// the queue of 3 is full: the fourth would wait longer than the queue allows
		assertThat(this.http.get("/leaky").statusCode()).isEqualTo(429);
	}

	@Test
	void tenantHeaderOnlyCountsWhenItIsATenantId() {
		assertThat(this.http.get("/tenant", "X-Tenant-Id", "acme").statusCode()).isEqualTo(200);
		assertThat(this.http.get("/tenant", "X-Tenant-Id", "acme").statusCode()).isEqualTo(200);
		assertThat(this.http.get("/tenant", "X-Tenant-Id", "acme").statusCode()).isEqualTo(429);
		assertThat(this.http.get("/tenant", "X-Tenant-Id", "globex").statusCode()).isEqualTo(200);
	}

}
