package io.github.ratelimit.internal.redis;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import org.springframework.boot.Banner;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.internal.core.FailoverRateLimitStore;
import io.github.ratelimit.internal.core.ObservedRateLimitStore;
import io.github.ratelimit.store.RateLimit;
import io.github.ratelimit.store.RateLimitStore;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * An application whose {@code spring.data.redis.*} names only a Sentinel finds the master
 * through it and keeps its buckets there: {@code ratelimit.store=auto} needs nothing more.
 * Runs a master and one Sentinel as {@code redis-server} processes on loopback.
 */
class RedisSentinelIntegrationTests {

	private static final String MASTER_NAME = "mymaster";

	/** The limit {@code GET /r/{id}}, named in the key by its id. */
	private static final String KEY = "ratelimit:{ip:127.0.0.1}:" + RateLimit.of("GET /r/{id}", Algorithm.TOKEN_BUCKET,
			1, Duration.ofHours(1)).id();

	private static RedisTestServer master;

	private static Path sentinelDir;

	private static RedisProcess sentinel;

	private static ConfigurableApplicationContext application;

	@BeforeAll
	static void startMasterSentinelAndApplication() throws IOException {
		Path executable = redisServer();
		assumeTrue(executable != null, "redis-server is not installed");
		master = RedisTestServer.start();
		sentinelDir = RedisTestSupport.createTempDir();
		// Sentinel refuses to start without a config file it can rewrite
		Path config = Files.writeString(sentinelDir.resolve("sentinel.conf"),
				String.join(System.lineSeparator(),
						"sentinel monitor " + MASTER_NAME + " " + master.host() + " " + master.port() + " 1",
						"sentinel resolve-hostnames no", ""));
		sentinel = RedisProcess.start(executable, sentinelDir, config, () -> List.of("--sentinel"));
		application = new SpringApplicationBuilder(RedisStoreIntegrationTests.LimitedApplication.class)
			.web(WebApplicationType.SERVLET)
			.bannerMode(Banner.Mode.OFF)
			.run("--server.port=0", "--server.address=127.0.0.1", "--ratelimit.store=auto",
					"--spring.data.redis.sentinel.master=" + MASTER_NAME,
					"--spring.data.redis.sentinel.nodes=" + RedisTestSupport.LOOPBACK + ":" + sentinel.port(),
					// a loaded machine must not push decisions to the local fallback
					"--ratelimit.redis.timeout=10s");
	}

	@AfterAll
	static void stopAll() {
		if (application != null) {
			application.close();
		}
		if (sentinel != null) {
			sentinel.stop();
			assertThat(sentinel.isAlive()).isFalse();
		}
		RedisTestSupport.deleteRecursively(sentinelDir);
		if (master != null) {
			master.close();
			assertThat(master.isRunning()).isFalse();
		}
	}

	@Test
	void limitsThroughTheMasterFoundBySentinel() throws Exception {
		assertThat(application.getBean(RedisConnectionFactory.class)).isInstanceOfSatisfying(
				LettuceConnectionFactory.class, (factory) -> assertThat(factory.getSentinelConfiguration()).isNotNull());
		RateLimitStore store = application.getBean(RateLimitStore.class);
		assertThat(store.name()).isEqualTo("redis");
		int port = application.getEnvironment().getRequiredProperty("local.server.port", Integer.class);
		HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
		for (int i = 1; i <= 3; i++) {
			assertThat(get(client, port, "/r/" + i).statusCode()).as("request %d", i).isEqualTo(200);
		}
		assertThat(get(client, port, "/r/4").statusCode()).isEqualTo(429);
		assertThat(((FailoverRateLimitStore) store).status().fallbackActive()).as("decided by Redis, not the local fallback").isFalse();

		// asked directly of the master, not through Sentinel
		assertThat(masterCommand("EXISTS", KEY)).isEqualTo(1L);
		assertThat((Long) masterCommand("TTL", KEY)).isBetween(3_500L, 3_600L);
	}

	private static HttpResponse<String> get(HttpClient client, int port, String path)
			throws IOException, InterruptedException {
		HttpRequest request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
			.timeout(Duration.ofSeconds(10))
			.GET()
			.build();
		return client.send(request, HttpResponse.BodyHandlers.ofString());
	}

	private static Object masterCommand(String... args) {
		try {
			return RedisTestSupport.command(master.host(), master.port(), RedisTestServer.COMMAND_TIMEOUT, args);
		}
		catch (IOException ex) {
			throw new UncheckedIOException("Could not ask the master " + master.redisUri(), ex);
		}
	}

	private static Path redisServer() {
		try {
			return RedisTestSupport.executable("redis-server", "to run Redis Sentinel");
		}
		catch (IllegalStateException ex) {
			return null;
		}
	}

}
