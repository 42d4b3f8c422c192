package io.github.ratelimit.e2e;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;

import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.security.config.web.server.ServerHttpSecurity;
import org.springframework.security.web.server.SecurityWebFilterChain;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

import io.github.ratelimit.KeySource;
import io.github.ratelimit.RateLimited;
import io.github.ratelimit.internal.redis.RedisTestServer;
import io.github.ratelimit.store.RateLimitStore;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Two reactive instances of one service sharing a real Redis, with BlockHound watching
 * their event loops: together they admit exactly a limit's capacity, handler limits and
 * route limits alike, and when Redis dies each falls back to its share without a single
 * server error.
 */
class ReactiveRedisFleetTests {

	private static final Pattern QUOTA = Pattern.compile(";q=(\\d+)");

	private static final HttpClient CLIENT = HttpClient.newBuilder()
		.version(HttpClient.Version.HTTP_1_1)
		.connectTimeout(Duration.ofSeconds(5))
		.build();

	@BeforeAll
	static void detectBlockingCalls() {
		ReactiveFrontEndBehaviourTests.detectBlockingCalls();
	}

	@Test
	void twoInstancesAdmitExactlyTheCapacityBetweenThem() {
		try (RedisTestServer redis = RedisTestServer.start();
				ConfigurableApplicationContext first = start(redis);
				ConfigurableApplicationContext second = start(redis)) {
			List<HttpResponse<String>> handler = concurrently(List.of(first, second), "/shared", 60);
			assertThat(statuses(handler)).isEqualTo(Map.of(200, 20L, 429, 40L));
			assertThat(handler).allSatisfy((answer) -> assertThat(quota(answer)).as("decided by Redis").isEqualTo(20));

			List<HttpResponse<String>> routed = concurrently(List.of(first, second), "/routed", 40);
			assertThat(statuses(routed)).isEqualTo(Map.of(200, 12L, 429, 28L));
		}
	}

	@Test
	void killingRedisGivesEachInstanceItsFallbackShareAndNoServerError() {
		try (RedisTestServer redis = RedisTestServer.start();
				ConfigurableApplicationContext first = start(redis);
				ConfigurableApplicationContext second = start(redis)) {
			assertThat(statuses(concurrently(List.of(first, second), "/shared", 10))).isEqualTo(Map.of(200, 10L));
			redis.kill();

			// a limit first used now: each instance admits half of it, on its own
			List<HttpResponse<String>> fromFirst = concurrently(List.of(first), "/fresh", 15);
			List<HttpResponse<String>> fromSecond = concurrently(List.of(second), "/fresh", 15);
			assertThat(statuses(fromFirst)).isEqualTo(Map.of(200, 10L, 429, 5L));
			assertThat(statuses(fromSecond)).isEqualTo(Map.of(200, 10L, 429, 5L));
			assertThat(fromFirst).allSatisfy((answer) -> assertThat(quota(answer)).as("the fallback's share").isEqualTo(10));
			assertThat(store(first).status().fallbackActive()).isTrue();
			assertThat(store(second).status().fallbackActive()).isTrue();

			// the route limit too, and a fail-closed limit refuses with 503 rather than guess
			assertThat(statuses(concurrently(List.of(first, second), "/routed", 20))).containsOnlyKeys(200, 429);
			HttpResponse<String> closed = get(first, "/closed").join();
			assertThat(closed.statusCode()).isEqualTo(503);
			assertThat(closed.headers().firstValue("Content-Type")).hasValueSatisfying(
					(type) -> assertThat(type).startsWith("application/problem+json"));
		}
	}

	private static ConfigurableApplicationContext start(RedisTestServer redis) {
		ConfigurableApplicationContext app = new SpringApplicationBuilder(FleetApplication.class).run(
				"--spring.main.web-application-type=reactive", "--server.port=0", "--server.address=127.0.0.1",
				"--spring.main.banner-mode=off", "--spring.data.redis.host=" + redis.host(),
				"--spring.data.redis.port=" + redis.port(), "--ratelimit.store=redis",
				"--ratelimit.redis.timeout=500ms", "--ratelimit.redis.probe-interval=1s",
				"--ratelimit.policies.closed.fail-mode=closed", "--ratelimit.routes[0].path=/routed",
				"--ratelimit.routes[0].capacity=12", "--ratelimit.routes[0].period=1h",
				"--ratelimit.routes[0].key=global");
		// connected and deciding on Redis before the test counts
		await().atMost(Duration.ofSeconds(30))
			.pollInterval(Duration.ofMillis(50))
			.until(() -> get(app, "/warm-up").join().statusCode() == 200
					&& !store(app).status().fallbackActive());
		return app;
	}

	private static RateLimitStore store(ConfigurableApplicationContext app) {
		return app.getBean(RateLimitStore.class);
	}

	/** Sends the requests at once, spread over the instances in turn, and waits for every answer. */
	private static List<HttpResponse<String>> concurrently(List<ConfigurableApplicationContext> apps, String path,
			int requests) {
		List<CompletableFuture<HttpResponse<String>>> sent = new ArrayList<>();
		for (int i = 0; i < requests; i++) {
			sent.add(get(apps.get(i % apps.size()), path));
		}
		List<HttpResponse<String>> answers = new ArrayList<>();
		for (CompletableFuture<HttpResponse<String>> answer : sent) {
			answers.add(answer.orTimeout(60, TimeUnit.SECONDS).join());
		}
		return answers;
	}

	private static CompletableFuture<HttpResponse<String>> get(ConfigurableApplicationContext app, String path) {
		int port = app.getEnvironment().getRequiredProperty("local.server.port", Integer.class);
		HttpRequest request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
			.timeout(Duration.ofSeconds(30))
			.build();
		return CLIENT.sendAsync(request, HttpResponse.BodyHandlers.ofString());
	}

	private static Map<Integer, Long> statuses(List<HttpResponse<String>> answers) {
		return answers.stream().collect(Collectors.groupingBy(HttpResponse::statusCode, Collectors.counting()));
	}

	private static long quota(HttpResponse<String> response) {
		Matcher quota = QUOTA.matcher(response.headers().firstValue("RateLimit-Policy").orElse(""));
		return quota.find() ? Long.parseLong(quota.group(1)) : -1;
	}

	@SpringBootConfiguration
	@EnableAutoConfiguration
	@Import(FleetEndpoints.class)
	static class FleetApplication {

		@Bean
		SecurityWebFilterChain permitAll(ServerHttpSecurity http) {
			return http.csrf(ServerHttpSecurity.CsrfSpec::disable)
				.authorizeExchange((exchanges) -> exchanges.anyExchange().permitAll())
				.build();
		}

	}

	@RestController
	static class FleetEndpoints {

		@RateLimited(name = "warm-up", capacity = 1_000_000, period = "1h", key = KeySource.GLOBAL)
		@GetMapping("/warm-up")
		Mono<String> warmUp() {
			return Mono.just("warm");
		}

		@RateLimited(name = "shared", capacity = 20, period = "1h", key = KeySource.GLOBAL)
		@GetMapping("/shared")
		Mono<String> shared() {
			return Mono.just("shared");
		}

		@RateLimited(name = "fresh", capacity = 20, period = "1h", key = KeySource.GLOBAL)
		@GetMapping("/fresh")
		Mono<String> fresh() {
			return Mono.just("fresh");
		}

		@GetMapping("/routed")
		Mono<String> routed() {
			return Mono.just("routed");
		}

		@RateLimited(name = "closed", capacity = 100, period = "1h", key = KeySource.GLOBAL)
		@GetMapping("/closed")
		Mono<String> closed() {
			return Mono.just("closed");
		}

	}

}
