package io.github.ratelimit.sample;

import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import com.jayway.jsonpath.JsonPath;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Bean;

import io.github.ratelimit.internal.core.RateLimitClock;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Runs the sample on a real port and calls it over HTTP, as curl would. Rate limit time
 * comes from a manual clock that only moves when a test moves it, so every count,
 * {@code RateLimit} header and {@code Retry-After} is exact. Each test starts at a whole
 * minute at least a minute after the previous one, so that the limits every request passes
 * (per client address, and every test calls from 127.0.0.1) are full again, and uses
 * limits or identities no other test touches otherwise.
 */
@SpringBootTest(webEnvironment = WebEnvironment.RANDOM_PORT, properties = "sample.slow-report-time=1500ms")
class SampleApplicationTests {

	private static final String QUOTA_EXCEEDED = "https://iana.org/assignments/http-problem-types#quota-exceeded";

	private static final String ALICE = "alice:alice-secret";

	private static final String BOB = "bob:bob-secret";

	private static final String ADMIN = "admin:admin-secret";

	/** Failed authentications one address gets at once: auth-failures in application.yml. */
	private static final int AUTH_FAILURES = 10;

	private static final String ADMIN_ORDERS = "/actuator/ratelimits?name=orders-write&identity=user:admin";

	private final HttpClient http = HttpClient.newBuilder()
		.version(HttpClient.Version.HTTP_1_1)
		.connectTimeout(Duration.ofSeconds(5))
		.build();

	@LocalServerPort
	private int port;

	@Autowired
	private ManualClock clock;

	@Autowired
	private SmsSender smsSender;

	@BeforeEach
	void startAtAWholeMinuteAMinuteLater() {
		this.clock.advance(Duration.ofMinutes(1));
		this.clock.advanceToNextMinute();
	}

	@Test
	void prometheusShowsTheLimiterToSignedInUsersOnly() throws Exception {
		get("/api/orders/1", null);
		assertThat(get("/actuator/prometheus", null).statusCode()).isEqualTo(401);
		HttpResponse<String> scrape = get("/actuator/prometheus", ALICE);
		assertThat(scrape.statusCode()).isEqualTo(200);
		assertThat(scrape.body()).contains(
				"ratelimit_requests_total{limit=\"GET /api/orders/{id}\",result=\"allowed\",store=\"memory\"}")
			.contains("ratelimit_fallback_active")
			.contains("ratelimit_overload_limit")
			.contains("ratelimit_overload_in_flight")
			.doesNotContain("127.0.0.1");
		assertThat(get("/actuator/health", ALICE).body()).contains("\"rateLimit\"");
	}

	@Test
	void onlyAdminsReadAndResetLimitsThroughTheActuator() throws Exception {
		assertThat(get("/actuator/ratelimits", null).statusCode()).isEqualTo(401);
		assertThat(delete(ADMIN_ORDERS, null).statusCode()).isEqualTo(401);
		assertThat(get("/actuator/ratelimits", ALICE).statusCode()).isEqualTo(403);
		HttpResponse<String> limits = get("/actuator/ratelimits", ADMIN);
		assertThat(limits.statusCode()).isEqualTo(200);
		assertThat(JsonPath.<List<String>>read(limits.body(), "$.limits[*].name")).contains("orders-write",
				"GET /api/orders/{id}", "GET /api/search/**");
		assertThat(JsonPath.<Boolean>read(limits.body(), "$.overload.enabled")).isTrue();
		assertThat(JsonPath.<Integer>read(limits.body(), "$.overload.limit")).isBetween(10, 200);
		assertThat(JsonPath.<List<String>>read(limits.body(),
				"$.limits[?(@.name == 'orders-write')].guards[0].sources.capacity"))
			.containsExactly("ratelimit.policies.orders-write.capacity");

		for (int i = 0; i < 3; i++) {
			assertThat(post("/api/orders", "{\"item\":\"Desk lamp\",\"quantity\":1}", ADMIN).statusCode())
				.isEqualTo(201);
		}
		assertQuotaExceeded(post("/api/orders", "{\"item\":\"Desk lamp\",\"quantity\":1}", ADMIN), "orders-write");
		HttpResponse<String> bucket = get(ADMIN_ORDERS, ADMIN);
		assertThat(JsonPath.<Integer>read(bucket.body(), "$.buckets[0].remaining")).isZero();

		assertThat(delete(ADMIN_ORDERS, ALICE).statusCode()).as("a plain user cannot reset").isEqualTo(403);
		assertThat(post("/api/orders", "{\"item\":\"Desk lamp\",\"quantity\":1}", ADMIN).statusCode())
			.isEqualTo(429);
		HttpResponse<String> reset = delete(ADMIN_ORDERS, ADMIN);
		assertThat(reset.statusCode()).isEqualTo(200);
		assertThat(reset.body()).contains("\"orders-write\":true");
		assertThat(post("/api/orders", "{\"item\":\"Desk lamp\",\"quantity\":1}", ADMIN).statusCode())
			.isEqualTo(201);
	}

	@Test
	void readingOrdersSharesOneBucketAcrossIdsAndAnswers429WithHeaders() throws Exception {
		for (int id = 1; id <= 5; id++) {
			HttpResponse<String> response = get("/api/orders/" + id, null);
			assertThat(response.statusCode()).as("GET /api/orders/%d", id).isIn(200, 404);
			assertThat(member(response, "RateLimit-Policy", "GET /api/orders/{id}"))
				.isEqualTo("\"GET /api/orders/{id}\";q=5;w=60");
			assertThat(member(response, "RateLimit", "GET /api/orders/{id}"))
				.isEqualTo("\"GET /api/orders/{id}\";r=" + (5 - id) + ";t=12");
		}
		HttpResponse<String> rejected = get("/api/orders/6", null);
		assertQuotaExceeded(rejected, "GET /api/orders/{id}");
		assertThat(header(rejected, "Retry-After")).isEqualTo("12");
		assertThat(member(rejected, "RateLimit-Policy", "GET /api/orders/{id}"))
			.isEqualTo("\"GET /api/orders/{id}\";q=5;w=60");
		assertThat(member(rejected, "RateLimit", "GET /api/orders/{id}"))
			.isEqualTo("\"GET /api/orders/{id}\";r=0;t=12");
		assertThat(header(rejected, "Cache-Control")).isEqualTo("no-store");

		this.clock.advance(Duration.ofSeconds(12));
		HttpResponse<String> afterRetry = get("/api/orders/1", null);
		assertThat(afterRetry.statusCode()).isEqualTo(200);
		assertThat(JsonPath.<String>read(afterRetry.body(), "$.item")).isEqualTo("Mechanical keyboard");
	}

	@Test
	void placingOrdersFollowsTheOrdersWritePolicyPerUser() throws Exception {
		for (int i = 1; i <= 3; i++) {
			HttpResponse<String> response = post("/api/orders", "{\"item\":\"Desk lamp\",\"quantity\":1}", ALICE);
			assertThat(response.statusCode()).isEqualTo(201);
			assertThat(member(response, "RateLimit-Policy", "orders-write")).isEqualTo("\"orders-write\";q=3;w=60");
			assertThat(member(response, "RateLimit", "orders-write")).startsWith("\"orders-write\";r=" + (3 - i) + ";");
		}
		HttpResponse<String> rejected = post("/api/orders", "{\"item\":\"Desk lamp\",\"quantity\":1}", ALICE);
		assertQuotaExceeded(rejected, "orders-write");
		assertThat(header(rejected, "Retry-After")).isEqualTo("20");

		assertThat(post("/api/orders", "{\"item\":\"Desk lamp\",\"quantity\":1}", BOB).statusCode()).isEqualTo(201);
		assertThat(post("/api/orders", "{\"item\":\"Desk lamp\",\"quantity\":1}", null).statusCode()).isEqualTo(401);
	}

	@Test
	void proUserPlacesOrdersUnderThePolicysProPlan() throws Exception {
		// Bob may have ordered in another test: give his bucket time to refill
		this.clock.advance(Duration.ofHours(1));
		for (int i = 1; i <= 10; i++) {
			HttpResponse<String> response = post("/api/orders", "{\"item\":\"Desk lamp\",\"quantity\":1}", BOB);
			assertThat(response.statusCode()).isEqualTo(201);
			assertThat(member(response, "RateLimit-Policy", "orders-write")).isEqualTo("\"orders-write\";q=10;w=50");
			assertThat(member(response, "RateLimit", "orders-write"))
				.isEqualTo("\"orders-write\";r=" + (10 - i) + ";t=5");
		}
		HttpResponse<String> rejected = post("/api/orders", "{\"item\":\"Desk lamp\",\"quantity\":1}", BOB);
		assertQuotaExceeded(rejected, "orders-write");
		assertThat(header(rejected, "Retry-After")).isEqualTo("5");
	}

	@Test
	void reportsShareOneBucketPerUserWithWeightedCosts() throws Exception {
		HttpResponse<String> read = get("/api/reports/999", BOB);
		assertThat(read.statusCode()).isEqualTo(404);
		assertThat(member(read, "RateLimit", "reports")).startsWith("\"reports\";r=99;");
		for (int remaining : new int[] { 74, 49, 24 }) {
			HttpResponse<String> generated = post("/api/reports", "{\"type\":\"sales\"}", BOB);
			assertThat(generated.statusCode()).isEqualTo(201);
			assertThat(member(generated, "RateLimit", "reports")).startsWith("\"reports\";r=" + remaining + ";");
		}
		// 24 units left: not enough for a report (25), plenty for a read (1).
		assertQuotaExceeded(post("/api/reports", "{\"type\":\"sales\"}", BOB), "reports");
		HttpResponse<String> cheapRead = get("/api/reports/999", BOB);
		assertThat(cheapRead.statusCode()).isEqualTo(404);
		assertThat(member(cheapRead, "RateLimit", "reports")).startsWith("\"reports\";r=23;");

		for (int i = 1; i <= 4; i++) {
			assertThat(post("/api/reports", "{}", ALICE).statusCode()).as("report %d", i).isEqualTo(201);
		}
		HttpResponse<String> rejected = post("/api/reports", "{}", ALICE);
		assertQuotaExceeded(rejected, "reports");
		assertThat(member(rejected, "RateLimit-Policy", "reports")).isEqualTo("\"reports\";q=100;w=60");
		assertThat(header(rejected, "Retry-After")).isEqualTo("15");
	}

	@Test
	void searchIsLimitedByTheRouteInApplicationYml() throws Exception {
		for (int i = 1; i <= 20; i++) {
			// Both paths match /api/search/** and so draw from one bucket.
			String path = (i % 2 == 0) ? "/api/search?q=usb" : "/api/search/products?q=key";
			HttpResponse<String> response = get(path, null);
			assertThat(response.statusCode()).as("search %d", i).isEqualTo(200);
			assertThat(member(response, "RateLimit-Policy", "GET /api/search/**"))
				.isEqualTo("\"GET /api/search/**\";q=20;w=10");
		}
		HttpResponse<String> rejected = get("/api/search?q=usb", null);
		assertQuotaExceeded(rejected, "GET /api/search/**");
		assertThat(header(rejected, "Retry-After")).isEqualTo("11");
	}

	@Test
	void loginUsernameCountsOnlyFailedAttempts() throws Exception {
		for (int i = 1; i <= 8; i++) {
			HttpResponse<String> signedIn = login("alice", "alice-secret");
			assertThat(signedIn.statusCode()).as("sign-in %d", i).isEqualTo(200);
			// advertised as if it counted; it is given back once the 200 is final
			assertThat(member(signedIn, "RateLimit", "login-username")).startsWith("\"login-username\";r=4;");
		}
	}

	@Test
	void loginIsLimitedPerUsernameAndPerClientIp() throws Exception {
		for (int i = 1; i <= 5; i++) {
			HttpResponse<String> attempt = login("alice", "guess-" + i);
			assertThat(attempt.statusCode()).as("attempt %d", i).isEqualTo(401);
			assertThat(header(attempt, "RateLimit")).contains("\"login-username\";r=" + (5 - i) + ";");
		}
		HttpResponse<String> sixth = login("alice", "alice-secret");
		assertQuotaExceeded(sixth, "login-username");
		assertThat(header(sixth, "RateLimit-Policy"))
			.isEqualTo("\"per-ip\";q=120;w=60, \"auth-failures\";q=10;w=60, \"login-ip\";q=10;w=60, "
					+ "\"login-username\";q=5;w=60");
		assertThat(header(sixth, "Retry-After")).isEqualTo("60");

		// Another username from the same address still gets through...
		HttpResponse<String> bob = login("bob", "bob-secret");
		assertThat(bob.statusCode()).isEqualTo(200);
		assertThat(JsonPath.<String>read(bob.body(), "$.username")).isEqualTo("bob");
		// ...until the address has used its 10 attempts (the rejected one did not count).
		for (int i = 1; i <= 4; i++) {
			assertThat(login("user" + i, "guess").statusCode()).isEqualTo(401);
		}
		assertQuotaExceeded(login("user5", "guess"), "login-ip");
	}

	@Test
	void tenantUsageIsLimitedPerTenantInFixedWindows() throws Exception {
		for (int i = 1; i <= 10; i++) {
			HttpResponse<String> response = tenantUsage("acme");
			assertThat(response.statusCode()).isEqualTo(200);
			assertThat(member(response, "RateLimit", "GET /api/tenant/usage"))
				.isEqualTo("\"GET /api/tenant/usage\";r=" + (10 - i) + ";t=60");
		}
		HttpResponse<String> rejected = tenantUsage("acme");
		assertQuotaExceeded(rejected, "GET /api/tenant/usage");
		assertThat(header(rejected, "Retry-After")).isEqualTo("60");
		assertThat(tenantUsage("globex").statusCode()).isEqualTo(200);

		this.clock.advanceToNextMinute();
		assertThat(tenantUsage("acme").statusCode()).isEqualTo(200);
	}

	@Test
	void smsSenderBeanWaitsForItsTurnAndRejectsWhenTheWaitIsTooLong() throws Exception {
		String sms = "{\"phoneNumber\":\"+15550001111\",\"text\":\"Your order has shipped\"}";
		List<Long> millis = new ArrayList<>();
		for (int i = 1; i <= 3; i++) {
			long start = System.nanoTime();
			HttpResponse<String> sent = post("/api/notifications/sms", sms, ALICE);
			millis.add(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start));
			assertThat(sent.statusCode()).as("sms %d", i).isEqualTo(200);
			assertThat(member(sent, "RateLimit-Policy", "sms")).isEqualTo("\"sms\";q=1;w=1");
		}
		// The clock stands still, so no token comes back: the 2nd and 3rd messages waited
		// 1 and 2 seconds for the slots they reserved, and a 4th would wait 3 (maxWait is 2).
		assertThat(millis.get(1)).isGreaterThanOrEqualTo(900);
		assertThat(millis.get(2)).isGreaterThanOrEqualTo(1900);
		assertQuotaExceeded(post("/api/notifications/sms", sms, ALICE), "sms");
		String other = "{\"phoneNumber\":\"+15550002222\",\"text\":\"Your order has shipped\"}";
		assertThat(post("/api/notifications/sms", other, ALICE).statusCode()).isEqualTo(200);
	}

	@Test
	void wrongBasicPasswordsFromOneAddressGetTheDocumentedNumberOfPasswordChecks() throws Exception {
		// auth-failures (application.yml): 10 failed authentications at once per address,
		// then one every 6 seconds; the clock stands still
		List<Integer> statuses = new ArrayList<>();
		for (int i = 1; i <= 40; i++) {
			HttpResponse<String> guess = get("/api/reports/0", "alice:guess-" + i);
			statuses.add(guess.statusCode());
			if (guess.statusCode() == 401) {
				assertThat(member(guess, "RateLimit", "auth-failures")).as("guess %d", i)
					.startsWith("\"auth-failures\";r=" + (AUTH_FAILURES - i) + ";");
			}
			else {
				assertQuotaExceeded(guess, "auth-failures");
			}
		}
		assertThat(statuses.stream().filter((status) -> status == 401).count()).as("password checks")
			.isLessThanOrEqualTo(AUTH_FAILURES);
		assertThat(statuses.subList(0, AUTH_FAILURES)).containsOnly(401);
		assertThat(statuses.subList(AUTH_FAILURES, 40)).containsOnly(429);
		// refused before Spring Security looks at the password, right or wrong, on any path
		assertQuotaExceeded(get("/api/reports/0", ALICE), "auth-failures");
		assertQuotaExceeded(get("/api/search?q=usb", "alice:guess-41"), "auth-failures");

		this.clock.advance(Duration.ofSeconds(6));
		// one token back: the right password is no failure and gives it back...
		assertThat(get("/api/reports/0", ALICE).statusCode()).isEqualTo(404);
		// ...so one more guess is checked, and the next is refused again
		assertThat(get("/api/reports/0", "alice:guess-42").statusCode()).isEqualTo(401);
		assertQuotaExceeded(get("/api/reports/0", "alice:guess-43"), "auth-failures");
	}

	@Test
	void loginUsernamesShareOneBucketWhateverTheirCase() throws Exception {
		// the user store ignores case...
		HttpResponse<String> signedIn = login("BoB", "bob-secret");
		assertThat(signedIn.statusCode()).isEqualTo(200);
		assertThat(JsonPath.<String>read(signedIn.body(), "$.username")).isEqualTo("bob");
		// ...and so does the limit: five failed attempts in all, however the name is written
		// (the successful sign-in was given back: only 401s count)
		String[] variants = { "bob", "BOB", "bOb", "Bob", "boB" };
		for (int i = 0; i < variants.length; i++) {
			HttpResponse<String> attempt = login(variants[i], "guess");
			assertThat(attempt.statusCode()).as(variants[i]).isEqualTo(401);
			assertThat(member(attempt, "RateLimit", "login-username"))
				.startsWith("\"login-username\";r=" + (4 - i) + ";");
		}
		assertQuotaExceeded(login("bOB", "bob-secret"), "login-username");
		assertQuotaExceeded(login("bob", "bob-secret"), "login-username");
		HttpResponse<String> bucket = get("/actuator/ratelimits?name=login-username&identity=key:bob", ADMIN);
		assertThat(JsonPath.<Integer>read(bucket.body(), "$.buckets[0].remaining")).isZero();
		HttpResponse<String> variant = get("/actuator/ratelimits?name=login-username&identity=key:BoB", ADMIN);
		assertThat(JsonPath.<Boolean>read(variant.body(), "$.buckets[0].exists")).isFalse();
	}

	@Test
	void smsNumbersWrittenDifferentlyShareOneBucket() throws Exception {
		String sms = "{\"phoneNumber\":\"00 1 (555) 000-3333\",\"text\":\"Your order has shipped\"}";
		HttpResponse<String> sent = post("/api/notifications/sms", sms, ALICE);
		assertThat(sent.statusCode()).isEqualTo(200);
		assertThat(JsonPath.<String>read(sent.body(), "$.phoneNumber")).isEqualTo("+15550003333");
		assertThat(smsBucket("+15550003333")).isZero();

		// a caller of the bean itself, not through the controller, is keyed the same way
		this.smsSender.send("0015550004444", "Your order has shipped");
		assertThat(smsBucket("+15550004444")).isZero();
		HttpResponse<String> asWritten = get("/actuator/ratelimits?name=sms&identity=key:0015550004444", ADMIN);
		assertThat(JsonPath.<Boolean>read(asWritten.body(), "$.buckets[0].exists")).isFalse();

		String national = "{\"phoneNumber\":\"0555 000 5555\",\"text\":\"Your order has shipped\"}";
		assertThat(post("/api/notifications/sms", national, ALICE).statusCode()).isEqualTo(400);
	}

	@Test
	void loginFloodStoppedPerAddressChargesNothingElse() throws Exception {
		String before = get("/actuator/prometheus", ALICE).body();
		// five failed and five successful sign-ins: the address's 10 attempts of login-ip
		// (and half of its auth-failures, which counts only the 401s)
		for (int i = 1; i <= 5; i++) {
			assertThat(login("flood-" + i, "guess").statusCode()).isEqualTo(401);
			assertThat(login("alice", "alice-secret").statusCode()).isEqualTo(200);
		}
		for (int i = 11; i <= 40; i++) {
			assertQuotaExceeded(login("flood-" + i, "guess"), "login-ip");
		}
		String after = get("/actuator/prometheus", ALICE).body();
		// 30 usernames login-ip rejected: login-username had room for each and was charged
		// for none, and what per-ip (decided before Spring Security) charged was given back
		assertThat(counter(after, "login-username", "allowed") - counter(before, "login-username", "allowed"))
			.isEqualTo(10);
		assertThat(counter(after, "login-username", "not_charged") - counter(before, "login-username", "not_charged"))
			.isEqualTo(30);
		assertThat(counter(after, "login-ip", "rejected") - counter(before, "login-ip", "rejected")).isEqualTo(30);
		assertThat(refunds(after, "per-ip") - refunds(before, "per-ip")).isEqualTo(30);
	}

	private int smsBucket(String phoneNumber) throws IOException, InterruptedException {
		HttpResponse<String> bucket = get("/actuator/ratelimits?name=sms&identity="
				+ URLEncoder.encode("key:" + phoneNumber, StandardCharsets.UTF_8), ADMIN);
		assertThat(JsonPath.<Boolean>read(bucket.body(), "$.buckets[0].exists")).as(phoneNumber).isTrue();
		return JsonPath.read(bucket.body(), "$.buckets[0].remaining");
	}

	/** A {@code ratelimit_requests_total} value of a Prometheus scrape, 0 when absent. */
	private static double counter(String scrape, String limit, String result) {
		return sample(scrape, "ratelimit_requests_total{limit=\"" + limit + "\",result=\"" + result
				+ "\",store=\"memory\"} ");
	}

	private static double refunds(String scrape, String limit) {
		return sample(scrape, "ratelimit_refunds_total{limit=\"" + limit + "\",store=\"memory\"} ");
	}

	private static double sample(String scrape, String prefix) {
		return scrape.lines()
			.filter((line) -> line.startsWith(prefix))
			.mapToDouble((line) -> Double.parseDouble(line.substring(prefix.length())))
			.findFirst()
			.orElse(0);
	}

	private static void assertQuotaExceeded(HttpResponse<String> response, String policy) {
		assertThat(response.statusCode()).isEqualTo(429);
		assertThat(header(response, "Content-Type")).startsWith("application/problem+json");
		assertThat(Long.parseLong(header(response, "Retry-After"))).isPositive();
		assertThat(header(response, "RateLimit-Policy")).contains("\"" + policy + "\"");
		assertThat(header(response, "RateLimit")).contains("\"" + policy + "\";r=");
		assertThat(JsonPath.<String>read(response.body(), "$.type")).isEqualTo(QUOTA_EXCEEDED);
		assertThat(JsonPath.<Integer>read(response.body(), "$.status")).isEqualTo(429);
		assertThat(JsonPath.<List<String>>read(response.body(), "$.violated-policies")).containsExactly(policy);
	}

	private static String header(HttpResponse<?> response, String name) {
		return response.headers().firstValue(name).orElse(null);
	}

	/** The member of a list header that is about one limit: {@code "orders-write";q=3;w=60}. */
	private static String member(HttpResponse<?> response, String name, String limit) {
		String value = header(response, name);
		assertThat(value).as(name).isNotNull();
		return Arrays.stream(value.split(", "))
			.filter((member) -> member.startsWith("\"" + limit + "\";"))
			.findFirst()
			.orElse(null);
	}

	@Test
	void atMostTwoSlowReportsRunAtOncePerUser() throws Exception {
		List<CompletableFuture<HttpResponse<String>>> running = new ArrayList<>();
		for (int i = 0; i < 2; i++) {
			running.add(this.http.sendAsync(request("/api/reports/slow", ALICE).GET().build(),
					HttpResponse.BodyHandlers.ofString()));
		}
		// once both are running (each takes 1.5s), a third is turned away at once rather than queued
		Thread.sleep(300);
		HttpResponse<String> third = get("/api/reports/slow", ALICE);
		assertThat(third.statusCode()).isEqualTo(429);
		assertThat(third.headers().firstValue("Retry-After")).hasValue("1");
		assertThat(third.body()).contains("\"violated-policies\":[\"slow-reports\"]");
		// two calls in flight, not two a minute
		assertThat(member(third, "RateLimit-Policy", "slow-reports"))
			.isEqualTo("\"slow-reports\";q=2;qu=\"concurrent-requests\"");
		// another user has permits of their own
		assertThat(this.http.sendAsync(request("/api/reports/slow", BOB).GET().build(),
				HttpResponse.BodyHandlers.ofString()).get(10, TimeUnit.SECONDS).statusCode()).isEqualTo(200);
		for (CompletableFuture<HttpResponse<String>> report : running) {
			assertThat(report.get(10, TimeUnit.SECONDS).statusCode()).isEqualTo(200);
		}
		// both reports are over: their permits are back
		assertThat(get("/api/reports/slow", ALICE).statusCode()).isEqualTo(200);
	}

	private HttpResponse<String> get(String path, String credentials) throws IOException, InterruptedException {
		return send(request(path, credentials).GET());
	}

	private HttpResponse<String> delete(String path, String credentials) throws IOException, InterruptedException {
		return send(request(path, credentials).DELETE());
	}

	private HttpResponse<String> post(String path, String json, String credentials)
			throws IOException, InterruptedException {
		return send(request(path, credentials).header("Content-Type", "application/json")
			.POST(HttpRequest.BodyPublishers.ofString(json)));
	}

	private HttpResponse<String> login(String username, String password) throws IOException, InterruptedException {
		return post("/api/login", "{\"username\":\"" + username + "\",\"password\":\"" + password + "\"}", null);
	}

	private HttpResponse<String> tenantUsage(String tenant) throws IOException, InterruptedException {
		return send(request("/api/tenant/usage", null).header("X-Tenant-Id", tenant).GET());
	}

	private HttpRequest.Builder request(String path, String credentials) {
		HttpRequest.Builder builder = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + this.port + path))
			.timeout(Duration.ofSeconds(10));
		if (credentials != null) {
			builder.header("Authorization",
					"Basic " + Base64.getEncoder().encodeToString(credentials.getBytes(StandardCharsets.UTF_8)));
		}
		return builder;
	}

	private HttpResponse<String> send(HttpRequest.Builder builder) throws IOException, InterruptedException {
		return this.http.send(builder.build(), HttpResponse.BodyHandlers.ofString());
	}

	@TestConfiguration(proxyBeanMethods = false)
	static class ManualClockConfiguration {

		@Bean
		ManualClock rateLimitClock() {
			return new ManualClock(Instant.parse("2030-01-01T00:00:00Z"));
		}

	}

	/**
	 * A rate limit clock that moves only when told to.
	 */
	static final class ManualClock implements RateLimitClock {

		private static final long MINUTE_MICROS = 60_000_000L;

		private final AtomicLong micros;

		ManualClock(Instant start) {
			this.micros = new AtomicLong(TimeUnit.SECONDS.toMicros(start.getEpochSecond()));
		}

		@Override
		public long nowMicros() {
			return this.micros.get();
		}

		void advance(Duration duration) {
			this.micros.addAndGet(duration.toNanos() / 1_000);
		}

		void advanceToNextMinute() {
			this.micros.updateAndGet((now) -> (now / MINUTE_MICROS + 1) * MINUTE_MICROS);
		}

	}

}
