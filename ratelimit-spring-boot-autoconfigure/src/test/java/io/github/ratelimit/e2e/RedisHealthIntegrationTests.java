package io.github.ratelimit.e2e;

import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import com.jayway.jsonpath.JsonPath;
import org.junit.jupiter.api.Test;

import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.security.config.annotation.web.builders.HttpSecurity;
import org.springframework.security.web.SecurityFilterChain;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

import io.github.ratelimit.KeySource;
import io.github.ratelimit.RateLimited;
import io.github.ratelimit.internal.redis.RedisTestServer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * An application with {@code spring-boot-starter-data-redis} and the actuator, as
 * docs/stores.md sets it up, whose Redis is killed while it runs: {@code /actuator/health}
 * stays {@code UP} and answers within the store's timeout, with Redis's state and the
 * fallback's in the details. The connection keeps Boot's default command timeout of 60
 * seconds, which Spring Boot's own {@code redis} indicator would wait before going
 * {@code DOWN}.
 */
class RedisHealthIntegrationTests {

	/** The starter's indicator, package-private in the auto-configuration: known here by name. */
	private static final String STARTERS_INDICATOR = "RateLimitRedisHealthIndicator";

	/** ratelimit.redis.timeout of the application. */
	private static final Duration REDIS_TIMEOUT = Duration.ofMillis(250);

	/** What the health endpoint may take: the store's timeout and a generous margin for a busy machine. */
	private static final Duration HEALTH_BOUND = Duration.ofSeconds(5);

	@Test
	void healthStaysUpAndAnswersWithinTheStoreTimeoutWhenRedisDies() {
		try (RedisTestServer redis = RedisTestServer.start();
				ConfigurableApplicationContext app = startApplication(redis)) {
			assertThat(app.getBean("redisHealthIndicator").getClass().getSimpleName()).isEqualTo(STARTERS_INDICATOR);
			HttpTestClient http = http(app);
			await().atMost(Duration.ofSeconds(30))
				.pollInterval(Duration.ofMillis(100))
				.until(() -> "reachable".equals(read(http.get("/actuator/health"), "$.components.redis.details.redis")));
			assertThat(http.get("/limited").statusCode()).isEqualTo(200);

			redis.kill();
			// decided by the fallback: the breaker opens at the first failure
			assertThat(http.get("/limited").statusCode()).isEqualTo(200);
			for (int check = 0; check < 3; check++) {
				long start = System.nanoTime();
				HttpResponse<String> health = http.get("/actuator/health");
				Duration took = Duration.ofNanos(System.nanoTime() - start);
				System.out.println("/actuator/health with Redis killed answered in " + took.toMillis() + "ms");
				assertThat(took).as("time /actuator/health took").isLessThan(HEALTH_BOUND);
				assertThat(health.statusCode()).as(health.body()).isEqualTo(200);
				assertThat((String) read(health, "$.status")).isEqualTo("UP");
				assertThat((String) read(health, "$.components.redis.status")).isEqualTo("UP");
				assertThat((String) read(health, "$.components.redis.details.redis")).isEqualTo("unreachable");
				assertThat((String) read(health, "$.components.redis.details.error")).isNotBlank();
				assertThat((String) read(health, "$.components.redis.details.deciding")).isEqualTo("fallback");
				assertThat((Boolean) read(health, "$.components.redis.details.fallbackActive")).isTrue();
				assertThat((String) read(health, "$.components.rateLimit.status")).isEqualTo("UP");
			}
		}
	}

	@Test
	void keepsBootsIndicatorWhenRedisServesMoreThanRateLimits() {
		try (RedisTestServer redis = RedisTestServer.start();
				ConfigurableApplicationContext app = startApplication(redis, "--ratelimit.redis.rate-limits-only=false",
						"--spring.data.redis.timeout=1s")) {
			assertThat(app.getBeansOfType(HealthIndicator.class).values())
				.noneMatch((indicator) -> indicator.getClass().getSimpleName().equals(STARTERS_INDICATOR));
			HttpTestClient http = http(app);
			await().atMost(Duration.ofSeconds(30))
				.pollInterval(Duration.ofMillis(100))
				.until(() -> http.get("/actuator/health").statusCode() == 200);

			redis.kill();
			HttpResponse<String> health = http.get("/actuator/health");
			assertThat(health.statusCode()).as(health.body()).isEqualTo(503);
			assertThat((String) read(health, "$.components.redis.status")).isEqualTo("DOWN");
		}
	}

	private static ConfigurableApplicationContext startApplication(RedisTestServer redis, String... extra) {
		List<String> args = new ArrayList<>(List.of("--server.port=0", "--server.address=127.0.0.1",
				"--spring.main.banner-mode=off", "--spring.data.redis.host=" + redis.host(),
				"--spring.data.redis.port=" + redis.port(), "--ratelimit.redis.timeout=" + REDIS_TIMEOUT.toMillis() + "ms",
				"--ratelimit.redis.failure-threshold=1", "--management.endpoint.health.show-details=always"));
		args.addAll(List.of(extra));
		return new SpringApplicationBuilder(HealthApplication.class).run(args.toArray(String[]::new));
	}

	private static HttpTestClient http(ConfigurableApplicationContext app) {
		return new HttpTestClient(app.getEnvironment().getRequiredProperty("local.server.port", Integer.class));
	}

	private static <T> T read(HttpResponse<String> response, String path) {
		return JsonPath.read(response.body(), path);
	}

	@SpringBootConfiguration(proxyBeanMethods = false)
	@EnableAutoConfiguration
	@Import(Endpoints.class)
	static class HealthApplication {

		@Bean
		SecurityFilterChain permitAll(HttpSecurity http) throws Exception {
			return http.authorizeHttpRequests((requests) -> requests.anyRequest().permitAll()).build();
		}

	}

	@RestController
	static class Endpoints {

		@RateLimited(name = "limited", capacity = 1_000, period = "1h", key = KeySource.GLOBAL)
		@GetMapping("/limited")
		String limited() {
			return "limited";
		}

	}

}
