package io.github.ratelimit.e2e;

import java.net.http.HttpResponse;
import java.time.Duration;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;

import static org.assertj.core.api.Assertions.assertThat;

@SpringBootTest(classes = E2eApplication.class, webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { "ratelimit.policies.tuned.capacity=3", "ratelimit.routes[0].path=/routed/**",
				"ratelimit.routes[0].methods=GET", "ratelimit.routes[0].capacity=4", "ratelimit.routes[0].period=1h",
				"ratelimit.routes[0].key=ip", "ratelimit.routes[1].path=/login", "ratelimit.routes[1].methods=post",
				"ratelimit.routes[1].capacity=3", "ratelimit.routes[1].period=1h", "ratelimit.routes[1].key=ip",
				"ratelimit.routes[2].path=/private/guarded", "ratelimit.routes[2].capacity=3",
				"ratelimit.routes[2].period=1h", "ratelimit.routes[2].key=ip",
				"ratelimit.routes[3].path=/private/routed", "ratelimit.routes[3].capacity=2",
				"ratelimit.routes[3].period=1h", "ratelimit.routes[3].key=principal",
				"ratelimit.routes[4].path=/private/both", "ratelimit.routes[4].capacity=5",
				"ratelimit.routes[4].period=1000h", "ratelimit.routes[4].key=principal",
				"ratelimit.routes[5].path=/refund/*", "ratelimit.routes[5].policy=refund-route",
				"ratelimit.policies.refund-route.capacity=5", "ratelimit.policies.refund-route.period=1000h",
				"ratelimit.policies.refund-route.key=ip" })
class RouteLimitsIntegrationTests {

	@LocalServerPort
	int port;

	HttpTestClient http;

	@BeforeEach
	void freshBuckets() {
		E2eApplication.advance(Duration.ofDays(3650 * 20));
		this.http = new HttpTestClient(this.port);
	}

	@Test
	void routeConfiguredOnlyInPropertiesIsEnforced() {
		for (int i = 0; i < 4; i++) {
			assertThat(this.http.get("/routed/" + i).statusCode()).isEqualTo(200);
		}
		HttpResponse<String> rejected = this.http.get("/routed/99");
		assertThat(rejected.statusCode()).isEqualTo(429);
		assertThat(rejected.body()).contains("\"violated-policies\":[\"GET /routed/**\"]");
		assertThat(rejected.headers().firstValue("Retry-After")).hasValue("900");
	}

	@Test
	void pathTricksDoNotSlipPastARoute() {
		for (int i = 0; i < 4; i++) {
			this.http.get("/routed/" + i);
		}
		assertThat(this.http.get("//routed/x").statusCode()).isEqualTo(429);
		assertThat(this.http.get("/routed;jsessionid=1/x").statusCode()).isEqualTo(429);
		assertThat(this.http.get("/other/../routed/x").statusCode()).isEqualTo(429);
	}

	@Test
	void headRequestsCountAgainstGetRoutes() {
		for (int i = 0; i < 4; i++) {
			assertThat(this.http.get("/routed/" + i).statusCode()).isEqualTo(200);
		}
		assertThat(this.http.head("/routed/9").statusCode()).isEqualTo(429);
	}

	@Test
	void corsPreflightIsNotCharged() {
		for (int i = 0; i < 6; i++) {
			assertThat(this.http.options("/routed/1", "Origin", "https://app.example", "Access-Control-Request-Method",
					"GET").statusCode()).isNotEqualTo(429);
		}
		assertThat(this.http.get("/routed/1").statusCode()).isEqualTo(200);
	}

	@Test
	void encodedPercentInThePathNeverFailsTheFilter() {
		assertThat(this.http.get("/routed/%25zz").statusCode()).isNotEqualTo(500);
		assertThat(this.http.get("/anything/%25").statusCode()).isNotEqualTo(500);
	}

	@Test
	void principalRouteIsNotChargedWhenSpringSecurityRejectsTheRequest() {
		String[] wrong = HttpTestClient.basic("alice", "wrong");
		for (int i = 0; i < 4; i++) {
			assertThat(this.http.get("/private/routed", wrong).statusCode()).isEqualTo(401);
		}
	}

	@Test
	void spoofedForwardedForFromAnUntrustedPeerIsIgnored() {
		for (int i = 0; i < 4; i++) {
			assertThat(this.http.get("/routed/a", "X-Forwarded-For", "203.0.113." + i).statusCode()).isEqualTo(200);
		}
		assertThat(this.http.get("/routed/a", "X-Forwarded-For", "198.51.100.1", "Forwarded", "for=192.0.2.9")
			.statusCode()).isEqualTo(429);
	}

	@Test
	void forwardingHeadersNamingAnotherClientGiveNoAccessToItsBucket() {
		// the victim connects from 127.0.0.2; the attacker, from 127.0.0.1, names it in every header
		String[] impersonation = { "Forwarded", "for=127.0.0.2", "X-Forwarded-For", "127.0.0.2" };
		for (int i = 0; i < 4; i++) {
			assertThat(this.http.get("/routed/a", impersonation).statusCode()).isEqualTo(200);
		}
		assertThat(this.http.get("/routed/a", impersonation).statusCode()).isEqualTo(429);
		assertThat(this.http.get("/routed/a", "Forwarded", "for=\"127.0.0.2:443\"").statusCode()).isEqualTo(429);
		// the attacker neither drew from the victim's bucket nor emptied it
		for (int i = 0; i < 4; i++) {
			assertThat(this.http.rawGet("127.0.0.2", "/routed/a")).isEqualTo(200);
		}
		assertThat(this.http.rawGet("127.0.0.2", "/routed/a")).isEqualTo(429);
	}

	@Test
	void ipRouteHoldsForFormLoginAnsweredBySpringSecurity() {
		for (int i = 0; i < 3; i++) {
			HttpResponse<String> failed = this.http.post("/login", "username=alice&password=wrong" + i);
			assertThat(failed.statusCode()).isEqualTo(302);
		}
		HttpResponse<String> limited = this.http.post("/login", "username=alice&password=alice-pw");
		assertThat(limited.statusCode()).isEqualTo(429);
		assertThat(limited.body()).contains("POST /login");
	}

	@Test
	void ipRouteHoldsForFailedBasicAuthentication() {
		String[] wrong = HttpTestClient.basic("alice", "nope");
		for (int i = 0; i < 3; i++) {
			assertThat(this.http.get("/private/guarded", wrong).statusCode()).isEqualTo(401);
		}
		assertThat(this.http.get("/private/guarded", wrong).statusCode()).isEqualTo(429);
	}

	@Test
	void principalRouteSeesTheAuthenticatedUser() {
		String[] alice = HttpTestClient.basic("alice", "alice-pw");
		assertThat(this.http.get("/private/routed", alice).body()).isEqualTo("alice");
		assertThat(this.http.get("/private/routed", alice).statusCode()).isEqualTo(200);
		assertThat(this.http.get("/private/routed", alice).statusCode()).isEqualTo(429);
		assertThat(this.http.get("/private/routed", HttpTestClient.basic("bob", "bob-pw")).statusCode())
			.isEqualTo(200);
	}

	@Test
	void principalRouteAndHandlerLimitAreDecidedTogether() {
		String[] alice = HttpTestClient.basic("alice", "alice-pw");
		HttpResponse<String> first = this.http.get("/private/both", alice);
		assertThat(first.statusCode()).isEqualTo(200);
		assertThat(first.headers().firstValue("RateLimit").orElseThrow()).contains("\"handler-and-route\";r=0")
			.contains("\"/private/both\";r=4");
		for (int i = 0; i < 3; i++) {
			HttpResponse<String> rejected = this.http.get("/private/both", alice);
			assertThat(rejected.statusCode()).isEqualTo(429);
			assertThat(rejected.body()).contains("\"violated-policies\":[\"handler-and-route\"]");
		}
		E2eApplication.advance(Duration.ofHours(1));
		HttpResponse<String> later = this.http.get("/private/both", alice);
		assertThat(later.statusCode()).isEqualTo(200);
		// the route paid for two admitted requests only
		assertThat(later.headers().firstValue("RateLimit").orElseThrow()).contains("\"/private/both\";r=3");
	}

	@Test
	void earlyRouteStageIsRefundedWhenTheHandlerRejects() {
		HttpResponse<String> first = this.http.get("/refund/1");
		assertThat(first.statusCode()).isEqualTo(200);
		assertThat(first.headers().firstValue("RateLimit").orElseThrow()).contains("\"refund-route\";r=4");
		for (int i = 0; i < 3; i++) {
			HttpResponse<String> rejected = this.http.get("/refund/1");
			assertThat(rejected.statusCode()).isEqualTo(429);
			assertThat(rejected.headers().firstValue("RateLimit").orElseThrow()).contains("\"refund-route\";r=4");
		}
		E2eApplication.advance(Duration.ofHours(1));
		HttpResponse<String> later = this.http.get("/refund/2");
		assertThat(later.statusCode()).isEqualTo(200);
		assertThat(later.headers().firstValue("RateLimit").orElseThrow()).contains("\"refund-route\";r=3");
	}

}
