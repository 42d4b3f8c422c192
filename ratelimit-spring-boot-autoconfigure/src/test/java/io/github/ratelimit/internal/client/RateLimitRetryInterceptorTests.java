package io.github.ratelimit.internal.client;

import java.net.http.HttpClient;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Random;
import java.util.Set;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.http.HttpEntity;
import org.springframework.http.HttpMethod;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.http.client.JdkClientHttpRequestFactory;
import org.springframework.web.client.ResourceAccessException;
import org.springframework.web.client.RestClient;
import org.springframework.web.client.RestTemplate;

import io.github.ratelimit.store.contract.MutableClock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * Retries against a real HTTP server on loopback. The sleeper records each delay and moves
 * the clock by it instead of waiting, so the time budget is exact and no test waits.
 */
class RateLimitRetryInterceptorTests {

	private static final HttpClient HTTP = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

	private static final DateTimeFormatter HTTP_DATE = DateTimeFormatter
		.ofPattern("EEE, dd MMM yyyy HH:mm:ss 'GMT'", Locale.US)
		.withZone(ZoneOffset.UTC);

	private final MutableClock clock = new MutableClock();

	private final List<Duration> sleeps = new ArrayList<>();

	private ScriptedHttpServer server;

	@BeforeEach
	void startServer() throws Exception {
		this.server = new ScriptedHttpServer();
	}

	@AfterEach
	void stopServer() throws Exception {
		this.server.close();
	}

	@Test
	void waitsTheSecondsOfRetryAfter() {
		this.server.respond(429, "", "Retry-After", "2").respond(429, "", "Retry-After", "1").respond(200, "done");
		ResponseEntity<String> response = get(RetrySettings.defaults());
		assertThat(response.getStatusCode().value()).isEqualTo(200);
		assertThat(response.getBody()).isEqualTo("done");
		assertThat(this.server.requests()).hasSize(3);
		assertThat(this.sleeps).containsExactly(Duration.ofSeconds(2), Duration.ofSeconds(1));
	}

	@Test
	void measuresAnHttpDateFromTheLocalClockWithoutDateHeader() {
		Instant now = Instant.ofEpochSecond(this.clock.nowMicros() / 1_000_000);
		this.server.respond(429, "", "Retry-After", HTTP_DATE.format(now.plusSeconds(7))).respond(200, "done");
		assertThat(get(RetrySettings.defaults()).getStatusCode().value()).isEqualTo(200);
		assertThat(this.sleeps).containsExactly(Duration.ofSeconds(7));
	}

	@Test
	void measuresAnHttpDateFromTheResponseDateHeader() {
		// the server's clock is a year behind ours: only its own Date makes its Retry-After meaningful
		Instant serverNow = Instant.parse("2023-01-01T12:00:00Z");
		this.server
			.respond(503, "", "Date", HTTP_DATE.format(serverNow), "Retry-After",
					HTTP_DATE.format(serverNow.plusSeconds(4)))
			.respond(200, "done");
		assertThat(get(RetrySettings.defaults()).getStatusCode().value()).isEqualTo(200);
		assertThat(this.sleeps).containsExactly(Duration.ofSeconds(4));
	}

	@Test
	void waitsForTheLatestResetAmongExhaustedRateLimitPolicies() {
		this.server
			.respond(429, "", "RateLimit", "\"burst\";r=5;t=1, \"api\";r=0;t=8, \"daily\";r=0;t=3")
			.respond(200, "done");
		assertThat(get(RetrySettings.defaults()).getStatusCode().value()).isEqualTo(200);
		assertThat(this.sleeps).containsExactly(Duration.ofSeconds(8));
	}

	@Test
	void backsOffWithJitterWhen503NamesNoDelay() {
		this.server.respondTimes(3, 503, "busy").respond(200, "done");
		RetrySettings settings = RetrySettings.defaults()
			.withMaxAttempts(4)
			.withBackOff(Duration.ofMillis(100), Duration.ofSeconds(10), 2.0);
		assertThat(get(settings).getStatusCode().value()).isEqualTo(200);
		assertThat(this.server.requests()).hasSize(4);
		assertThat(this.sleeps).hasSize(3);
		assertThat(this.sleeps.get(0)).isBetween(Duration.ZERO, Duration.ofMillis(100));
		assertThat(this.sleeps.get(1)).isBetween(Duration.ZERO, Duration.ofMillis(200));
		assertThat(this.sleeps.get(2)).isBetween(Duration.ZERO, Duration.ofMillis(400));
	}

	@Test
	void givesUpAtTheAttemptBoundAndReturnsTheLast429() {
		this.server.respondTimes(2, 429, "slow down", "Retry-After", "1").respond(429, "still too fast", "Retry-After", "1");
		this.server.respond(200, "never reached");
		ResponseEntity<String> response = get(RetrySettings.defaults().withMaxAttempts(3));
		assertThat(response.getStatusCode().value()).isEqualTo(429);
		assertThat(response.getBody()).isEqualTo("still too fast");
		assertThat(response.getHeaders().getFirst("Retry-After")).isEqualTo("1");
		assertThat(this.server.requests()).hasSize(3);
		assertThat(this.sleeps).containsExactly(Duration.ofSeconds(1), Duration.ofSeconds(1));
	}

	@Test
	void givesUpWhenTheNextWaitWouldEndBeyondTheTimeBudget() {
		this.server.respondTimes(5, 429, "slow down", "Retry-After", "4").respond(200, "never reached");
		RetrySettings settings = RetrySettings.defaults().withMaxAttempts(10).withMaxTotalTime(Duration.ofSeconds(10));
		ResponseEntity<String> response = get(settings);
		// attempts at 0 s, 4 s and 8 s; a fourth at 12 s would be beyond the budget
		assertThat(response.getStatusCode().value()).isEqualTo(429);
		assertThat(this.server.requests()).hasSize(3);
		assertThat(this.sleeps).containsExactly(Duration.ofSeconds(4), Duration.ofSeconds(4));
	}

	@Test
	void givesUpAtOnceWhenTheServerAsksForMoreThanTheMaximumDelay() {
		this.server.respond(429, "come back in an hour", "Retry-After", "3600").respond(200, "never reached");
		ResponseEntity<String> response = get(RetrySettings.defaults());
		assertThat(response.getStatusCode().value()).isEqualTo(429);
		assertThat(response.getBody()).isEqualTo("come back in an hour");
		assertThat(this.server.requests()).hasSize(1);
		assertThat(this.sleeps).isEmpty();
	}

	@Test
	void neverRetriesPostByDefault() {
		this.server.respond(429, "slow down", "Retry-After", "1").respond(201, "never reached");
		ResponseEntity<String> response = post(RetrySettings.defaults(), "{\"order\":1}");
		assertThat(response.getStatusCode().value()).isEqualTo(429);
		assertThat(this.server.requests()).hasSize(1);
		assertThat(this.sleeps).isEmpty();
	}

	@Test
	void retriesPostWhenConfiguredAndSendsTheSameBodyAgain() {
		StringBuilder payload = new StringBuilder("{\"lines\":[");
		for (int i = 0; i < 5_000; i++) {
			payload.append(i == 0 ? "" : ",").append("\"línea ").append(i).append(" ✓\"");
		}
		String body = payload.append("]}").toString();
		this.server.respond(429, "", "Retry-After", "1").respond(503, "", "Retry-After", "2").respond(201, "created");
		RetrySettings settings = RetrySettings.defaults().withMethods(Set.of(HttpMethod.GET, HttpMethod.POST));
		ResponseEntity<String> response = post(settings, body);
		assertThat(response.getStatusCode().value()).isEqualTo(201);
		assertThat(this.server.requests()).hasSize(3).allSatisfy((request) -> {
			assertThat(request.method()).isEqualTo("POST");
			assertThat(new String(request.body(), java.nio.charset.StandardCharsets.UTF_8)).isEqualTo(body);
			assertThat(request.headers().get("content-type")).startsWith("application/json");
		});
		assertThat(this.sleeps).containsExactly(Duration.ofSeconds(1), Duration.ofSeconds(2));
	}

	@Test
	void retriesThroughRestTemplateWithTheBodyIntact() {
		this.server.respond(429, "", "Retry-After", "3").respond(204, "");
		RestTemplate restTemplate = new RestTemplate(new JdkClientHttpRequestFactory(HTTP));
		restTemplate.getInterceptors().add(interceptor(RetrySettings.defaults()));
		restTemplate.put(this.server.uri("/things/7"), new HttpEntity<>("{\"name\":\"seven\"}", json()));
		assertThat(this.server.requests()).hasSize(2)
			.extracting((request) -> new String(request.body(), java.nio.charset.StandardCharsets.UTF_8))
			.containsOnly("{\"name\":\"seven\"}");
		assertThat(this.sleeps).containsExactly(Duration.ofSeconds(3));
	}

	@Test
	void passesOtherStatusesThroughAtOnce() {
		this.server.respond(500, "broken", "Retry-After", "1").respond(200, "never reached");
		assertThat(get(RetrySettings.defaults()).getStatusCode().value()).isEqualTo(500);
		assertThat(this.server.requests()).hasSize(1);
		assertThat(this.sleeps).isEmpty();
	}

	@Test
	void stopsRetryingWhenInterruptedAndKeepsTheInterruptFlag() {
		this.server.respond(429, "", "Retry-After", "5").respond(200, "never reached");
		RateLimitRetryInterceptor interceptor = new RateLimitRetryInterceptor(RetrySettings.defaults(), this.clock,
				(delay) -> {
					throw new InterruptedException();
				}, new Random(1));
		try {
			assertThatExceptionOfType(ResourceAccessException.class)
				.isThrownBy(() -> client(interceptor).get().uri(this.server.uri("/things")).retrieve().toBodilessEntity())
				.withCauseInstanceOf(java.io.InterruptedIOException.class);
			assertThat(Thread.currentThread().isInterrupted()).isTrue();
			assertThat(this.server.requests()).hasSize(1);
		}
		finally {
			Thread.interrupted();
		}
	}

	@Test
	void doesNotRetryConnectionFailures() throws Exception {
		this.server.close();
		assertThatExceptionOfType(ResourceAccessException.class).isThrownBy(() -> get(RetrySettings.defaults()));
		assertThat(this.sleeps).isEmpty();
	}

	private ResponseEntity<String> get(RetrySettings settings) {
		return client(interceptor(settings)).get()
			.uri(this.server.uri("/things"))
			.retrieve()
			.onStatus((status) -> true, (request, response) -> {
			})
			.toEntity(String.class);
	}

	private ResponseEntity<String> post(RetrySettings settings, String body) {
		return client(interceptor(settings)).post()
			.uri(this.server.uri("/orders"))
			.contentType(MediaType.APPLICATION_JSON)
			.body(body)
			.retrieve()
			.onStatus((status) -> true, (request, response) -> {
			})
			.toEntity(String.class);
	}

	private RateLimitRetryInterceptor interceptor(RetrySettings settings) {
		return new RateLimitRetryInterceptor(settings, this.clock, (delay) -> {
			this.sleeps.add(delay);
			this.clock.advance(delay);
		}, new Random(42));
	}

	private static RestClient client(RateLimitRetryInterceptor interceptor) {
		return RestClient.builder()
			.requestFactory(new JdkClientHttpRequestFactory(HTTP))
			.requestInterceptor(interceptor)
			.build();
	}

	private static org.springframework.http.HttpHeaders json() {
		org.springframework.http.HttpHeaders headers = new org.springframework.http.HttpHeaders();
		headers.setContentType(MediaType.APPLICATION_JSON);
		return headers;
	}

}
