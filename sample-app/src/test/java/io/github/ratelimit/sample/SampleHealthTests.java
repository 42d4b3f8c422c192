package io.github.ratelimit.sample;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Base64;
import java.util.Map;

import com.jayway.jsonpath.JsonPath;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.health.registry.ReactiveHealthContributorRegistry;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.context.ActiveProfiles;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The sample's health in its two profiles. Spring Data Redis is on the class path for the
 * {@code redis} profile; in the default one no Redis runs, and health must not depend on
 * it. Redis points at a port where nothing listens, so a Redis running on this machine
 * cannot make a wrong answer look right.
 */
class SampleHealthTests {

	private static final String NO_REDIS_HERE = "spring.data.redis.port=1";

	@Nested
	@SpringBootTest(webEnvironment = WebEnvironment.RANDOM_PORT, properties = NO_REDIS_HERE)
	@ExtendWith(OutputCaptureExtension.class)
	class DefaultProfile {

		private final HttpClient http = HttpClient.newBuilder()
			.version(HttpClient.Version.HTTP_1_1)
			.connectTimeout(Duration.ofSeconds(5))
			.build();

		@LocalServerPort
		private int port;

		@Test
		void healthIsUpWithoutRedisAndProbesLogNoWarning(CapturedOutput output) throws Exception {
			int mark = output.getOut().length();
			for (int probe = 0; probe < 3; probe++) {
				HttpResponse<String> health = health();
				assertThat(health.statusCode()).as("probe %d", probe).isEqualTo(200);
				assertThat(JsonPath.<String>read(health.body(), "$.status")).isEqualTo("UP");
				Map<String, Object> components = JsonPath.read(health.body(), "$.components");
				assertThat(components).containsKey("rateLimit").doesNotContainKey("redis");
			}
			assertThat(output.getOut().substring(mark)).doesNotContain(" WARN ").doesNotContain(" ERROR ");
		}

		private HttpResponse<String> health() throws Exception {
			String alice = Base64.getEncoder().encodeToString("alice:alice-secret".getBytes(StandardCharsets.UTF_8));
			HttpRequest request = HttpRequest
				.newBuilder(URI.create("http://127.0.0.1:" + this.port + "/actuator/health"))
				.timeout(Duration.ofSeconds(10))
				.header("Authorization", "Basic " + alice)
				.GET()
				.build();
			return this.http.send(request, HttpResponse.BodyHandlers.ofString());
		}

	}

	/**
	 * The limiter stays off here: with it on, the Redis store would try the closed port at
	 * startup. Only the health configuration of the profile is under test.
	 */
	@Nested
	@SpringBootTest(properties = { NO_REDIS_HERE, "ratelimit.enabled=false" })
	@ActiveProfiles("redis")
	class RedisProfile {

		@Autowired
		private ReactiveHealthContributorRegistry registry;

		@Test
		void reportsRedisHealth() {
			assertThat(this.registry.getContributor("redis")).isNotNull();
		}

	}

}
