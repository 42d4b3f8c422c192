package io.github.ratelimit.e2e;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceClientConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.RedisTemplate;

import io.github.ratelimit.internal.redis.RedisTestServer;
import io.github.ratelimit.internal.redis.SlowLinkProxy;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A reactive service whose Redis sits behind a slow link (200 ms each way to the server)
 * decides concurrent requests side by side: their script calls share the link instead of
 * waiting for one another on an event loop.
 */
@SpringBootTest(classes = { ReactiveE2eApplication.class, ReactiveRedisSlowLinkTests.SlowRedis.class },
		webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { "spring.main.web-application-type=reactive", "ratelimit.redis.timeout=10s",
				"ratelimit.redis.key-prefix=slow-link:" })
class ReactiveRedisSlowLinkTests {

	private static final int REQUESTS = 48;

	static SlowLinkProxy proxy;

	@LocalServerPort
	int port;

	@AfterAll
	static void closeProxy() throws IOException {
		if (proxy != null) {
			proxy.close();
		}
	}

	@Test
	void concurrentRequestsAreDecidedSideBySide() {
		ReactiveE2eApplication.advance(Duration.ofDays(100));
		HttpClient client = HttpClient.newBuilder()
			.version(HttpClient.Version.HTTP_1_1)
			.connectTimeout(Duration.ofSeconds(5))
			.build();
		List<CompletableFuture<HttpResponse<String>>> responses = new ArrayList<>();
		for (int i = 0; i < REQUESTS; i++) {
			HttpRequest request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + this.port + "/things/" + i))
				.timeout(Duration.ofSeconds(30))
				.build();
			responses.add(client.sendAsync(request, HttpResponse.BodyHandlers.ofString()));
		}
		List<Integer> statuses = new ArrayList<>();
		for (CompletableFuture<HttpResponse<String>> response : responses) {
			statuses.add(response.orTimeout(60, TimeUnit.SECONDS).join().statusCode());
		}
		// every request was decided by Redis: five admitted, the rest refused, none failed
		assertThat(statuses).containsOnly(200, 429);
		assertThat(statuses.stream().filter((status) -> status == 200)).hasSize(5);
		assertThat(proxy.maxInFlight()).as("script calls on the slow link at once").isGreaterThanOrEqualTo(8);
	}

	/** The application's connection factory, reaching the tests' Redis through the slow link. */
	@Configuration(proxyBeanMethods = false)
	static class SlowRedis {

		@Bean
		LettuceConnectionFactory redisConnectionFactory() throws IOException {
			proxy = new SlowLinkProxy(RedisTestServer.shared().port(), 200);
			LettuceConnectionFactory factory = new LettuceConnectionFactory(
					new RedisStandaloneConfiguration("127.0.0.1", proxy.port()),
					LettuceClientConfiguration.builder().commandTimeout(Duration.ofSeconds(10)).build());
			return factory;
		}

		@Bean
		RedisTemplate<Object, Object> redisTemplate(LettuceConnectionFactory redisConnectionFactory) {
			RedisTemplate<Object, Object> template = new RedisTemplate<>();
			template.setConnectionFactory(redisConnectionFactory);
			return template;
		}

	}

}
