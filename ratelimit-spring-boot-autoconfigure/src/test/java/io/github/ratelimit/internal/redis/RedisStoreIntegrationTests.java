package io.github.ratelimit.internal.redis;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.security.config.annotation.web.builders.HttpSecurity;
import org.springframework.security.web.SecurityFilterChain;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.RestController;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.RateLimited;
import io.github.ratelimit.store.RateLimit;
import io.github.ratelimit.store.RateLimitStore;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * An application limited through Redis, end to end over HTTP: Spring Boot's own
 * {@code spring.data.redis.*} configuration is all it takes.
 */
@SpringBootTest(classes = RedisStoreIntegrationTests.LimitedApplication.class,
		webEnvironment = WebEnvironment.RANDOM_PORT, properties = { "ratelimit.store=redis", "server.address=127.0.0.1",
				"management.endpoints.web.exposure.include=ratelimits" })
@DirtiesContext
class RedisStoreIntegrationTests {

	/** The limit {@code GET /r/{id}}, named in the key by its id. */
	private static final String KEY = "ratelimit:{ip:127.0.0.1}:" + RateLimit.of("GET /r/{id}", Algorithm.TOKEN_BUCKET,
			1, Duration.ofHours(1)).id();

	private static HttpClient client;

	@LocalServerPort
	int port;

	@Autowired
	RateLimitStore store;

	@Autowired
	RedisConnectionFactory connectionFactory;

	@DynamicPropertySource
	static void redis(DynamicPropertyRegistry registry) {
		RedisTestServer.properties(registry);
	}

	@BeforeAll
	static void createClient() {
		client = HttpClient.newBuilder()
			.version(HttpClient.Version.HTTP_1_1)
			.connectTimeout(Duration.ofSeconds(5))
			.build();
	}

	@BeforeEach
	void emptyRedis() {
		RedisTestServer.shared().flushAll();
	}

	@Test
	void fourthRequestIsRejectedByTheBucketInRedis() {
		assertThat(this.store.name()).isEqualTo("redis");
		for (int i = 1; i <= 3; i++) {
			HttpResponse<String> admitted = get("/r/" + i);
			assertThat(admitted.statusCode()).isEqualTo(200);
			assertThat(admitted.body()).isEqualTo("r " + i);
			String quota = "\"GET /r/{id}\";r=" + (3 - i) + ";t=";
			assertThat(admitted.headers().firstValue("RateLimit"))
				.hasValueSatisfying((value) -> assertThat(value).startsWith(quota));
		}
		HttpResponse<String> rejected = get("/r/4");
		assertThat(rejected.statusCode()).isEqualTo(429);
		// three per hour: the next token comes twenty minutes after the first request
		assertThat(rejected.headers().firstValue("Retry-After")).hasValueSatisfying(
				(value) -> assertThat(Long.parseLong(value)).isBetween(1_100L, 1_200L));
		assertThat(rejected.headers().firstValue("RateLimit-Policy")).hasValue("\"GET /r/{id}\";q=3;w=3600");
		assertThat(rejected.headers().firstValue("RateLimit")).hasValueSatisfying(
				(value) -> assertThat(value).startsWith("\"GET /r/{id}\";r=0;t="));
		assertThat(rejected.body()).contains("\"violated-policies\":[\"GET /r/{id}\"]");

		StringRedisTemplate redis = new StringRedisTemplate(this.connectionFactory);
		assertThat(redis.keys("ratelimit:*")).containsExactly(KEY);
		// the time the bucket is full again and the interval it was computed with (20 minutes)
		assertThat(RedisValues.value(redis, KEY)).matches("\\d{16}:1200000000");
		assertThat(redis.getExpire(KEY)).isBetween(3_500L, 3_600L);
	}

	@Test
	void actuatorEndpointInspectsAndResetsTheBucketInRedis() {
		assertThat(get("/actuator/ratelimits").body()).contains("\"store\":{\"type\":\"redis\",\"active\":\"redis\"}");
		String bucket = "/actuator/ratelimits?name=GET+%2Fr%2F%7Bid%7D&identity=ip%3A127.0.0.1";
		assertThat(get(bucket).body()).contains("\"exists\":false", "\"remaining\":3");
		for (int i = 1; i <= 3; i++) {
			assertThat(get("/r/" + i).statusCode()).isEqualTo(200);
		}
		assertThat(get("/r/4").statusCode()).isEqualTo(429);
		HttpResponse<String> exhausted = get(bucket);
		assertThat(exhausted.statusCode()).isEqualTo(200);
		assertThat(exhausted.body()).contains("\"store\":\"redis\"", "\"exists\":true", "\"limit\":3",
				"\"remaining\":0");
		StringRedisTemplate redis = new StringRedisTemplate(this.connectionFactory);
		String other = KEY.replace("{ip:127.0.0.1}", "{ip:192.0.2.1}");
		RedisValues.copy(redis, KEY, other);

		HttpResponse<String> reset = send(HttpRequest.newBuilder(uri(bucket)).DELETE());
		assertThat(reset.statusCode()).isEqualTo(200);
		assertThat(reset.body()).contains("\"existed\":{\"GET /r/{id}\":true}");
		assertThat(redis.hasKey(KEY)).isFalse();
		assertThat(redis.hasKey(other)).as("another identity's bucket").isTrue();
		assertThat(get("/r/5").statusCode()).as("admitted as if new").isEqualTo(200);
	}

	private HttpResponse<String> get(String path) {
		return send(HttpRequest.newBuilder(uri(path)).GET());
	}

	private URI uri(String path) {
		return URI.create("http://127.0.0.1:" + this.port + path);
	}

	private HttpResponse<String> send(HttpRequest.Builder builder) {
		HttpRequest request = builder.timeout(Duration.ofSeconds(10)).build();
		try {
			return client.send(request, HttpResponse.BodyHandlers.ofString());
		}
		catch (IOException ex) {
			throw new IllegalStateException(ex);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
	}

	@SpringBootConfiguration
	// every endpoint is public: no generated user and password
	@EnableAutoConfiguration(
			excludeName = "org.springframework.boot.security.autoconfigure.UserDetailsServiceAutoConfiguration")
	@Import(LimitedApplication.LimitedController.class)
	static class LimitedApplication {

		@Bean
		SecurityFilterChain security(HttpSecurity http) throws Exception {
			return http.authorizeHttpRequests((requests) -> requests.anyRequest().permitAll())
				.csrf((csrf) -> csrf.disable())
				.build();
		}

		@RestController
		static class LimitedController {

			@RateLimited(capacity = 3, period = "1h")
			@GetMapping("/r/{id}")
			String r(@PathVariable String id) {
				return "r " + id;
			}

		}

	}

}
