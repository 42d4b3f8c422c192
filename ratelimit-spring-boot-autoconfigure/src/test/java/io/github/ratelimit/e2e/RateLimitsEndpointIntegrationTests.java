package io.github.ratelimit.e2e;

import java.net.URLEncoder;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;

import com.jayway.jsonpath.DocumentContext;
import com.jayway.jsonpath.JsonPath;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.store.RateLimit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The {@code ratelimits} actuator endpoint over HTTP: it lists every effective limit with
 * where its values came from, shows a bucket without consuming it, and resets one
 * identity's bucket.
 */
@SpringBootTest(classes = E2eApplication.class, webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { "management.endpoints.web.exposure.include=ratelimits", "ratelimit.policies.tuned.capacity=3",
				"ratelimit.routes[0].path=/routed/**", "ratelimit.routes[0].methods=GET",
				"ratelimit.routes[0].capacity=4", "ratelimit.routes[0].period=1h", "ratelimit.routes[0].key=ip",
				"ratelimit.policies.shadowed.candidate.capacity=5", "ratelimit.policies.unused.capacity=7",
				"ratelimit.policies.unused.algorithm=fixed-window" })
class RateLimitsEndpointIntegrationTests {

	private static final String THINGS = "GET /things/{id}";

	private static final String ENDPOINT = "/actuator/ratelimits";

	@LocalServerPort
	int port;

	HttpTestClient http;

	@BeforeEach
	void freshBuckets() {
		E2eApplication.advance(Duration.ofDays(3650 * 20));
		this.http = new HttpTestClient(this.port);
	}

	@Test
	void listsEveryLimitWithWhereItsValuesCameFrom() {
		HttpResponse<String> response = this.http.get(ENDPOINT);
		assertThat(response.statusCode()).isEqualTo(200);
		DocumentContext json = JsonPath.parse(response.body());
		assertThat(json.read("$.store", Map.class)).isEqualTo(Map.of("type", "memory", "active", "memory"));

		Map<String, Object> things = limit(json, THINGS);
		assertThat(things).containsEntry("id", RateLimit.of(THINGS, Algorithm.TOKEN_BUCKET, 5, Duration.ofMinutes(1)).id())
			.containsEntry("algorithm", "TOKEN_BUCKET")
			.containsEntry("capacity", 5)
			.containsEntry("refillTokens", 5)
			.containsEntry("period", "PT1M")
			.containsEntry("failMode", "OPEN")
			.containsEntry("shadow", false)
			.doesNotContainKeys("policy", "candidate");
		Map<String, Object> thingsGuard = guard(json, THINGS, 0);
		assertThat((String) thingsGuard.get("origin")).startsWith("@RateLimited on ")
			.endsWith("E2eApplication$ThingsController.thing(String)");
		assertThat(thingsGuard).containsEntry("routes", List.of(THINGS))
			.containsEntry("cost", 1)
			.containsEntry("key", List.of("principal", "ip"));
		assertThat(sources(json, THINGS, 0)).containsEntry("capacity", "annotation")
			.containsEntry("period", "annotation")
			.containsEntry("algorithm", "default")
			.containsEntry("refillTokens", "default")
			.containsEntry("cost", "default")
			.containsEntry("key", "default")
			.containsEntry("failMode", "default");

		assertThat(limit(json, "tuned")).containsEntry("capacity", 3)
			.containsEntry("period", "PT1H")
			.containsEntry("policy", "ratelimit.policies.tuned");
		assertThat(guard(json, "tuned", 0)).containsEntry("routes", List.of("GET /tuned"));
		assertThat(sources(json, "tuned", 0)).containsEntry("capacity", "ratelimit.policies.tuned.capacity")
			.containsEntry("period", "annotation");

		Map<String, Object> routed = guard(json, "GET /routed/**", 0);
		assertThat(routed).containsEntry("origin", "ratelimit.routes[0]")
			.containsEntry("routes", List.of("GET /routed/**"))
			.containsEntry("key", List.of("ip"));
		assertThat(sources(json, "GET /routed/**", 0)).containsEntry("capacity", "ratelimit.routes[0].capacity")
			.containsEntry("period", "ratelimit.routes[0].period")
			.containsEntry("key", "ratelimit.routes[0].key")
			.containsEntry("algorithm", "default");

		assertThat(json.read("$.limits[?(@.name == 'big')].guards[*].routes[0]", List.class))
			.containsExactlyInAnyOrder("GET /combined", "GET /big-only");
		assertThat((String) guard(json, "quotes", 0).get("origin")).endsWith("E2eApplication$Quotes.next()");
		assertThat(guard(json, "quotes", 0)).containsEntry("routes", List.of());
		assertThat(limit(json, "shadowed").get("candidate")).isEqualTo(Map.of("name", "shadowed (candidate)", "id",
				RateLimit.of("shadowed (candidate)", Algorithm.TOKEN_BUCKET, 5, Duration.ofHours(1)).id(), "algorithm",
				"TOKEN_BUCKET", "capacity", 5, "refillTokens", 5, "period", "PT1H", "source",
				"ratelimit.policies.shadowed.candidate"));
		assertThat(limit(json, "unused")).containsEntry("algorithm", "FIXED_WINDOW")
			.containsEntry("capacity", 7)
			.containsEntry("guards", List.of());
	}

	@Test
	void inspectsResetsAndLeavesOtherIdentitiesAlone() {
		for (int i = 0; i < 5; i++) {
			assertThat(this.http.get("/things/" + i).statusCode()).isEqualTo(200);
			assertThat(this.http.rawGet("127.0.0.2", "/things/" + i)).isEqualTo(200);
		}
		assertThat(this.http.get("/things/5").statusCode()).isEqualTo(429);
		assertThat(this.http.rawGet("127.0.0.2", "/things/5")).isEqualTo(429);

		Map<String, Object> exhausted = bucket(THINGS, "ip:127.0.0.1");
		assertThat(exhausted).containsEntry("name", THINGS)
			.containsEntry("store", "memory")
			.containsEntry("exists", true)
			.containsEntry("limit", 5)
			.containsEntry("remaining", 0)
			// five per minute: one comes back every twelve seconds
			.containsEntry("retryAfter", 12)
			.containsEntry("reset", 12);

		HttpResponse<String> reset = this.http.delete(query(THINGS, "ip:127.0.0.1"));
		assertThat(reset.statusCode()).isEqualTo(200);
		DocumentContext json = JsonPath.parse(reset.body());
		assertThat(json.read("$.identity", String.class)).isEqualTo("ip:127.0.0.1");
		assertThat(json.read("$.existed", Map.class)).isEqualTo(Map.of(THINGS, true));

		assertThat(bucket(THINGS, "ip:127.0.0.1")).containsEntry("exists", false).containsEntry("remaining", 5);
		assertThat(this.http.get("/things/6").statusCode()).as("admitted as if new").isEqualTo(200);
		assertThat(this.http.rawGet("127.0.0.2", "/things/6")).as("another identity's bucket").isEqualTo(429);
		assertThat(bucket(THINGS, "ip:127.0.0.2")).containsEntry("remaining", 0);
	}

	@Test
	void inspectingConsumesNothing() {
		for (int i = 0; i < 3; i++) {
			assertThat(bucket(THINGS, "ip:127.0.0.1")).containsEntry("exists", false).containsEntry("remaining", 5);
		}
		assertThat(this.http.get("/things/1").statusCode()).isEqualTo(200);
		for (int i = 0; i < 3; i++) {
			assertThat(bucket(THINGS, "ip:127.0.0.1")).containsEntry("exists", true).containsEntry("remaining", 4);
		}
		for (int i = 0; i < 4; i++) {
			assertThat(this.http.get("/things/1").statusCode()).isEqualTo(200);
		}
		assertThat(this.http.get("/things/1").statusCode()).isEqualTo(429);
	}

	@Test
	void principalsAreNamedAsInTheirKeys() {
		String[] alice = HttpTestClient.basic("alice", "alice-pw");
		assertThat(this.http.get("/private/me", alice).statusCode()).isEqualTo(200);
		assertThat(this.http.get("/private/me", alice).statusCode()).isEqualTo(200);
		assertThat(this.http.get("/private/me", alice).statusCode()).isEqualTo(429);
		assertThat(bucket("GET /private/me", "user:alice")).containsEntry("remaining", 0);
		assertThat(this.http.delete(query("GET /private/me", "user:alice")).statusCode()).isEqualTo(200);
		assertThat(this.http.get("/private/me", alice).statusCode()).isEqualTo(200);
		// a raw name the limiter would hash is hashed the same way
		String[] spaced = HttpTestClient.basic("carol admin", "pw");
		assertThat(this.http.get("/private/me", spaced).statusCode()).isEqualTo(200);
		assertThat(bucket("GET /private/me", "user:carol admin")).containsEntry("remaining", 1);
	}

	@Test
	void resetsTheCandidatesBucketToo() {
		assertThat(this.http.get("/shadowed").statusCode()).isEqualTo(200);
		assertThat(this.http.get("/shadowed").statusCode()).isEqualTo(200);
		assertThat(this.http.get("/shadowed").statusCode()).isEqualTo(429);
		DocumentContext buckets = JsonPath.parse(this.http.get(query("shadowed", "global")).body());
		assertThat(buckets.read("$.buckets[*].name", List.class)).containsExactly("shadowed", "shadowed (candidate)");
		assertThat(buckets.read("$.buckets[*].remaining", List.class)).containsExactly(0, 3);
		DocumentContext reset = JsonPath.parse(this.http.delete(query("shadowed", "global")).body());
		assertThat(reset.read("$.existed", Map.class))
			.isEqualTo(Map.of("shadowed", true, "shadowed (candidate)", true));
		buckets = JsonPath.parse(this.http.get(query("shadowed", "global")).body());
		assertThat(buckets.read("$.buckets[*].remaining", List.class)).containsExactly(2, 5);
		assertThat(this.http.get("/shadowed").statusCode()).isEqualTo(200);
	}

	@Test
	void answersBadRequestsWithFourHundred() {
		HttpResponse<String> unknown = this.http.get(query("no such limit", "ip:127.0.0.1"));
		assertThat(unknown.statusCode()).as(unknown.body()).isEqualTo(400);
		assertThat(this.http.delete(query("no such limit", "ip:127.0.0.1")).statusCode()).isEqualTo(400);
		assertThat(this.http.get(ENDPOINT + "?name=" + encode(THINGS)).statusCode()).isEqualTo(400);
		assertThat(this.http.get(ENDPOINT + "?identity=global").statusCode()).isEqualTo(400);
		assertThat(this.http.delete(ENDPOINT + "?name=" + encode(THINGS)).statusCode()).isEqualTo(400);
		assertThat(this.http.delete(ENDPOINT).statusCode()).isEqualTo(400);
	}

	private Map<String, Object> bucket(String name, String identity) {
		HttpResponse<String> response = this.http.get(query(name, identity));
		assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
		DocumentContext json = JsonPath.parse(response.body());
		assertThat(json.read("$.name", String.class)).isEqualTo(name);
		return json.read("$.buckets[0]");
	}

	private static Map<String, Object> limit(DocumentContext json, String name) {
		List<Map<String, Object>> found = json.read("$.limits[?(@.name == '" + name + "')]");
		assertThat(found).as(name).hasSize(1);
		return found.get(0);
	}

	@SuppressWarnings("unchecked")
	private static Map<String, Object> guard(DocumentContext json, String name, int index) {
		return ((List<Map<String, Object>>) limit(json, name).get("guards")).get(index);
	}

	@SuppressWarnings("unchecked")
	private static Map<String, Object> sources(DocumentContext json, String name, int index) {
		return (Map<String, Object>) guard(json, name, index).get("sources");
	}

	private static String query(String name, String identity) {
		return ENDPOINT + "?name=" + encode(name) + "&identity=" + encode(identity);
	}

	private static String encode(String value) {
		return URLEncoder.encode(value, StandardCharsets.UTF_8);
	}

}
