package io.github.ratelimit.internal.redis;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.security.config.annotation.web.builders.HttpSecurity;
import org.springframework.security.web.SecurityFilterChain;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.KeySource;
import io.github.ratelimit.RateLimited;
import io.github.ratelimit.internal.core.CircuitBreaker.State;
import io.github.ratelimit.internal.core.FailoverRateLimitStore;
import io.github.ratelimit.internal.pipeline.RateLimitResponses;
import io.github.ratelimit.internal.redis.RedisTestCluster.HostAndPort;
import io.github.ratelimit.store.RateLimit;
import io.github.ratelimit.store.RateLimitStore;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A web application limiting against a real Redis that dies, comes back, hangs, sleeps, and
 * loses a Cluster master: fail-open limits never answer 5xx and fall back to half their quota on
 * this instance, fail-closed limits answer 503, and decisions return to Redis on their own.
 */
@ExtendWith(OutputCaptureExtension.class)
class RedisFailureIntegrationTest {

	private static final Pattern QUOTA = Pattern.compile(";q=(\\d+)");

	private static final String FAILURE_LOG = "Rate limit store failed (";

	private static final String RECOVERY_LOG = "Rate limit store recovered";

	/** ratelimit.redis.probe-interval of the application. */
	private static final Duration PROBE_INTERVAL = Duration.ofSeconds(1);

	/** ratelimit.redis.timeout of the application. */
	private static final Duration REDIS_TIMEOUT = Duration.ofMillis(200);

	/** The global bucket of the limit {@code open}, named in the key by its id. */
	private static final String OPEN_KEY = "ratelimit:{global}:" + limitId("open");

	private static final String OPEN_AFTER_KEY = "ratelimit:{global}:" + limitId("open-after");

	@Test
	void redisKilledDuringLoadNeverCausesA5xxAndThisInstanceFallsBackToHalfTheQuota(CapturedOutput output)
			throws Exception {
		try (RedisTestServer redis = RedisTestServer.start();
				ConfigurableApplicationContext app = startApplication(standalone(redis))) {
			Http http = new Http(app);
			warmUp(app, http);
			int mark = output.getOut().length();
			long markedAt = System.nanoTime();
			// the fail-closed limit answers while Redis does
			await().atMost(Duration.ofSeconds(5))
				.pollInterval(Duration.ofMillis(20))
				.until(() -> http.get("/closed").statusCode() == 200);

			// 8 threads, 300 requests; Redis dies once 100 have been answered, and the last
			// 150 wait for it to be dead, so the kill falls inside the load and the fallback
			// certainly decides some of it
			int total = 300;
			CountDownLatch hundredAnswered = new CountDownLatch(100);
			CountDownLatch killed = new CountDownLatch(1);
			AtomicInteger next = new AtomicInteger();
			Queue<HttpResponse<String>> answers = new ConcurrentLinkedQueue<>();
			ExecutorService threads = Executors.newFixedThreadPool(8);
			try {
				List<Future<?>> workers = new ArrayList<>();
				for (int t = 0; t < 8; t++) {
					workers.add(threads.submit(() -> {
						for (int n = next.getAndIncrement(); n < total; n = next.getAndIncrement()) {
							if (n >= 150 && !killed.await(30, TimeUnit.SECONDS)) {
								throw new IllegalStateException("Redis was not killed in time");
							}
							answers.add(http.get("/open"));
							hundredAnswered.countDown();
						}
						return null;
					}));
				}
				assertThat(hundredAnswered.await(30, TimeUnit.SECONDS)).isTrue();
				redis.kill();
				killed.countDown();
				for (Future<?> worker : workers) {
					worker.get(60, TimeUnit.SECONDS);
				}
			}
			finally {
				threads.shutdownNow();
			}

			assertThat(answers).hasSize(total);
			Map<Integer, Long> statuses = answers.stream()
				.collect(Collectors.groupingBy(HttpResponse::statusCode, Collectors.counting()));
			assertThat(statuses.keySet()).as("statuses of %s requests", total).containsOnly(200, 429);
			assertThat(answers.stream().map(RedisFailureIntegrationTest::quota)).contains(20L, 10L).containsOnly(20L, 10L);
			// Redis admitted at most its quota (all of it among the first 100, unless a slow
			// answer made the fallback decide one); the fallback, deciding at least the last
			// 150, admitted its half of the quota on this instance and not one more
			long admittedByRedis = answers.stream().filter((answer) -> answer.statusCode() == 200 && quota(answer) == 20).count();
			long admittedByFallback = answers.stream().filter((answer) -> answer.statusCode() == 200 && quota(answer) == 10).count();
			System.out.println("Admitted by Redis " + admittedByRedis + ", by the fallback " + admittedByFallback + " of "
					+ total + ": " + statuses);
			assertThat(admittedByRedis).isBetween(1L, 20L);
			assertThat(admittedByFallback).isEqualTo(10);
			assertThat(store(app).status().fallbackActive()).isTrue();

			// a limit first used while Redis is dead: exactly the reduced share
			List<HttpResponse<String>> fresh = new ArrayList<>();
			for (int i = 0; i < 15; i++) {
				fresh.add(http.get("/open-after"));
			}
			assertThat(fresh).extracting(HttpResponse::statusCode)
				.containsExactlyElementsOf(Stream.concat(Stream.generate(() -> 200).limit(10),
						Stream.generate(() -> 429).limit(5))
					.toList());
			assertThat(fresh.get(0).headers().firstValue("RateLimit-Policy")).hasValue("\"open-after\";q=10;w=3600");

			// the fail-closed limit refuses with 503 rather than guess
			HttpResponse<String> closed = http.get("/closed");
			assertThat(closed.statusCode()).isEqualTo(503);
			assertThat(closed.headers().firstValue("Retry-After")).hasValueSatisfying(
					(seconds) -> assertThat(Long.parseLong(seconds)).isPositive());
			assertThat(closed.headers().firstValue("Content-Type"))
				.hasValueSatisfying((type) -> assertThat(type).startsWith("application/problem+json"));
			assertThat(closed.body())
				.contains("\"type\":\"" + RateLimitResponses.TEMPORARY_REDUCED_CAPACITY + "\"")
				.contains("\"status\":503")
				.contains("\"login\"");

			// hundreds of failed or refused store calls, a handful of log lines: the first
			// failure, the opening of the breaker, then at most one per probe interval
			long intervals = (System.nanoTime() - markedAt) / PROBE_INTERVAL.toNanos() + 1;
			long failureLines = count(output, mark, FAILURE_LOG);
			System.out.println(failureLines + " failure log lines in " + intervals + " probe intervals");
			assertThat(failureLines).isBetween(1L, 2 + intervals);
			assertThat(count(output, mark, "circuit breaker opened")).isPositive();
		}
	}

	@Test
	void decisionsReturnToRedisWithinTheProbeIntervalOnceItIsBack(CapturedOutput output) throws Exception {
		try (RedisTestServer redis = RedisTestServer.start();
				ConfigurableApplicationContext app = startApplication(standalone(redis))) {
			Http http = new Http(app);
			warmUp(app, http);
			int mark = output.getOut().length();
			redis.kill();
			// enough failures to open the breaker: from now on only its probes reach Redis
			await().atMost(Duration.ofSeconds(10))
				.pollInterval(Duration.ofMillis(20))
				.until(() -> quota(http.get("/open")) == 10 && store(app).status().circuitBreaker().equals("OPEN"));

			redis.restart();
			long restartedAt = System.nanoTime();
			await().atMost(PROBE_INTERVAL.plus(Duration.ofSeconds(5)))
				.pollInterval(Duration.ofMillis(20))
				.until(() -> quota(http.get("/open")) == 20);
			Duration recovery = Duration.ofNanos(System.nanoTime() - restartedAt);
			System.out.println("Decisions back on Redis " + recovery.toMillis() + "ms after its restart");

			// Redis decides again: a limit first used now gets its key there
			assertThat(redisCommand(redis.port(), "EXISTS", OPEN_AFTER_KEY)).isEqualTo(0L);
			await().atMost(Duration.ofSeconds(5))
				.pollInterval(Duration.ofMillis(20))
				.until(() -> quota(http.get("/open-after")) == 20);
			assertThat(redisCommand(redis.port(), "EXISTS", OPEN_AFTER_KEY)).isEqualTo(1L);
			await().atMost(Duration.ofSeconds(5))
				.pollInterval(Duration.ofMillis(20))
				.until(() -> http.get("/closed").statusCode() == 200);
			long intervals = recovery.toNanos() / PROBE_INTERVAL.toNanos() + 1;
			assertThat(count(output, mark, RECOVERY_LOG)).isBetween(1L, intervals);
		}
	}

	@Test
	void aHungRedisAddsAtMostItsTimeoutAndTheFallbackAnswers() throws Exception {
		try (RedisTestServer redis = RedisTestServer.start();
				ConfigurableApplicationContext app = startApplication(standalone(redis))) {
			Http http = new Http(app);
			warmUp(app, http);

			// every client but the one pausing gets no answer for three seconds
			assertThat(redisCommand(redis.port(), "CLIENT", "PAUSE", "3000", "ALL")).isEqualTo("OK");
			long pausedAt = System.nanoTime();
			List<Long> latencies = new ArrayList<>();
			while (latencies.size() < 10 && System.nanoTime() - pausedAt < Duration.ofMillis(2_500).toNanos()) {
				long start = System.nanoTime();
				HttpResponse<String> answer = http.get("/open-after");
				latencies.add(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start));
				assertThat(answer.statusCode()).isEqualTo(200);
				assertThat(quota(answer)).as("decided by the fallback").isEqualTo(10);
			}
			System.out.println("Latencies while Redis was paused (ms): " + latencies);
			assertThat(latencies).hasSizeGreaterThanOrEqualTo(6)
				.allSatisfy((millis) -> assertThat(millis).isLessThan(REDIS_TIMEOUT.toMillis() + 800));

			// once the pause ends, the next probe finds Redis answering again
			await().atMost(Duration.ofSeconds(10))
				.pollInterval(Duration.ofMillis(50))
				.until(() -> quota(http.get("/open")) == 20);
		}
	}

	@Test
	void callsRedisRunsAfterAStallLeaveNoPermitHeldAndTakeNoTokenTwice() throws Exception {
		try (RedisTestServer redis = RedisTestServer.start();
				ConfigurableApplicationContext app = startApplication(standalone(redis))) {
			Http http = new Http(app);
			warmUp(app, http);
			for (int i = 0; i < 3; i++) {
				assertThat(quota(http.get("/open"))).as("decided by Redis").isEqualTo(20);
			}

			// Redis sleeps three seconds; what the application sends meanwhile waits in its socket
			ExecutorService sleeper = Executors.newSingleThreadExecutor();
			try {
				Future<Object> sleeping = sleeper.submit(() -> redisCommand(redis.port(), Duration.ofSeconds(10), "DEBUG",
						"SLEEP", "3"));
				await().atMost(Duration.ofSeconds(1))
					.pollInterval(Duration.ofMillis(1))
					.until(() -> !RedisTestSupport.pong(RedisTestSupport.LOOPBACK, redis.port(), Duration.ofMillis(20)));
				// two calls and two tokens, fewer than the failures that open the breaker: each
				// call reaches Redis, times out, and the fallback decides it
				for (String path : List.of("/call", "/call", "/open", "/open")) {
					HttpResponse<String> answer = http.get(path);
					assertThat(answer.statusCode()).as(path).isEqualTo(200);
					assertThat(quota(answer)).as("%s decided by the fallback", path).isEqualTo(path.equals("/call") ? 1 : 10);
				}
				assertThat(sleeping.isDone()).as("Redis still asleep").isFalse();
				assertThat(sleeping.get(10, TimeUnit.SECONDS)).isEqualTo("OK");
			}
			finally {
				sleeper.shutdownNow();
			}

			// Redis decides again as if the stall had not happened: no lease is left to lock the
			// calls out, and the tokens it holds are the three it granted
			await().atMost(Duration.ofSeconds(10))
				.pollInterval(Duration.ofMillis(50))
				.until(() -> quota(http.get("/warm-up")) == 1_000);
			HttpResponse<String> call = http.get("/call");
			assertThat(call.statusCode()).isEqualTo(200);
			assertThat(quota(call)).isEqualTo(2);
			HttpResponse<String> open = http.get("/open");
			assertThat(quota(open)).isEqualTo(20);
			assertThat(open.headers().firstValue("RateLimit")).hasValueSatisfying(
					(value) -> assertThat(value).startsWith("\"open\";r=16;"));
		}
	}

	@Test
	void aRedisHungBeforeTheApplicationFirstConnectsAddsAtMostItsTimeout() throws Exception {
		try (RedisTestServer redis = RedisTestServer.start();
				ConfigurableApplicationContext app = startApplication(standalone(redis))) {
			Http http = new Http(app);
			// a warm JVM and web stack, but the application has not talked to Redis yet
			LettuceConnectionFactory other = redis.connectionFactory();
			try (RedisConnection connection = other.getConnection()) {
				connection.ping();
			}
			assertThat(http.get("/unlimited").statusCode()).isEqualTo(200);

			assertThat(redisCommand(redis.port(), "CLIENT", "PAUSE", "3000", "ALL")).isEqualTo("OK");
			long pausedAt = System.nanoTime();
			List<Long> latencies = new ArrayList<>();
			while (latencies.size() < 6 && System.nanoTime() - pausedAt < Duration.ofMillis(2_500).toNanos()) {
				long start = System.nanoTime();
				HttpResponse<String> answer = http.get("/open");
				latencies.add(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start));
				assertThat(answer.statusCode()).isEqualTo(200);
			}
			System.out.println("Latencies while Redis was paused before the first connection (ms): " + latencies);
			assertThat(latencies).isNotEmpty()
				.allSatisfy((millis) -> assertThat(millis).isLessThan(REDIS_TIMEOUT.toMillis() + 800));
		}
	}

	@Test
	void aKilledClusterMasterIsBridgedByTheFallbackAndItsPromotedReplicaTakesOver() throws Exception {
		try (RedisTestCluster cluster = RedisTestCluster.start(3, 1);
				ConfigurableApplicationContext app = startApplication(clustered(cluster))) {
			Http http = new Http(app);
			warmUp(app, http);
			await().atMost(Duration.ofSeconds(10))
				.pollInterval(Duration.ofMillis(20))
				.until(() -> quota(http.get("/open")) == 20);
			List<HostAndPort> mastersBefore = cluster.masters();
			HostAndPort owner = ownerOf(mastersBefore, OPEN_KEY);
			assertThat(redisCommand(owner.port(), "EXISTS", OPEN_KEY)).isEqualTo(1L);

			AtomicBoolean stop = new AtomicBoolean();
			Queue<HttpResponse<String>> answers = new ConcurrentLinkedQueue<>();
			ExecutorService load = Executors.newSingleThreadExecutor();
			try {
				Future<?> client = load.submit(() -> {
					long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
					while (!stop.get() && System.nanoTime() - deadline < 0 && answers.size() < 5_000) {
						answers.add(http.get("/open"));
						Thread.sleep(10);
					}
					return null;
				});
				cluster.killMaster(mastersBefore.indexOf(owner));
				cluster.awaitHealthy();
				HostAndPort promoted = cluster.masters()
					.stream()
					.filter((master) -> !mastersBefore.contains(master))
					.findFirst()
					.orElseThrow();

				// decisions resume on the cluster: a limit used only now gets its key on
				// the promoted replica, which now holds the slot
				await().atMost(Duration.ofSeconds(20))
					.pollInterval(Duration.ofMillis(100))
					.until(() -> quota(http.get("/open-after")) == 20);
				assertThat(redisCommand(promoted.port(), "EXISTS", OPEN_AFTER_KEY)).isEqualTo(1L);
				stop.set(true);
				client.get(30, TimeUnit.SECONDS);
			}
			finally {
				stop.set(true);
				load.shutdownNow();
			}
			Map<Integer, Long> statuses = answers.stream()
				.collect(Collectors.groupingBy(HttpResponse::statusCode, Collectors.counting()));
			System.out.println("Answers while a Cluster master failed over: " + statuses);
			assertThat(statuses.keySet()).containsOnly(200, 429);
			assertThat(answers.stream().map(RedisFailureIntegrationTest::quota))
				.as("the fallback bridged the failover").contains(10L);
		}
	}

	private static ConfigurableApplicationContext startApplication(List<String> redisProperties) {
		List<String> args = new ArrayList<>(List.of("--server.port=0", "--server.address=127.0.0.1",
				"--spring.main.banner-mode=off", "--spring.data.redis.timeout=1s", "--ratelimit.store=redis",
				"--ratelimit.redis.probe-interval=" + PROBE_INTERVAL.toMillis() + "ms",
				"--ratelimit.redis.timeout=" + REDIS_TIMEOUT.toMillis() + "ms",
				"--ratelimit.policies.login.fail-mode=closed"));
		args.addAll(redisProperties);
		return new SpringApplicationBuilder(FailureApplication.class).run(args.toArray(String[]::new));
	}

	private static List<String> standalone(RedisTestServer redis) {
		return List.of("--spring.data.redis.host=" + redis.host(), "--spring.data.redis.port=" + redis.port());
	}

	private static List<String> clustered(RedisTestCluster cluster) {
		return List.of(
				"--spring.data.redis.cluster.nodes="
						+ cluster.nodes().stream().map(HostAndPort::toString).collect(Collectors.joining(",")),
				"--spring.data.redis.lettuce.cluster.refresh.adaptive=true",
				"--spring.data.redis.lettuce.cluster.refresh.period=1s");
	}

	private static FailoverRateLimitStore store(ConfigurableApplicationContext app) {
		return (FailoverRateLimitStore) app.getBean(RateLimitStore.class);
	}

	/** The quota a response advertises: 20 when Redis decided, 10 when the fallback did. */
	private static long quota(HttpResponse<String> response) {
		String policy = response.headers().firstValue("RateLimit-Policy").orElse("");
		Matcher quota = QUOTA.matcher(policy);
		return quota.find() ? Long.parseLong(quota.group(1)) : -1;
	}

	/** Log lines containing a text, written after a mark. */
	private static long count(CapturedOutput output, int mark, String text) {
		return output.getOut().substring(mark).lines().filter((line) -> line.contains(text)).count();
	}

	/**
	 * Connects the application to Redis and waits until Redis decides, so that the first
	 * connection and a cold JVM do not count against the 200ms a call may take.
	 */
	private static void warmUp(ConfigurableApplicationContext app, Http http) {
		try (RedisConnection connection = app.getBean(RedisConnectionFactory.class).getConnection()) {
			connection.ping();
		}
		await().atMost(Duration.ofSeconds(30))
			.pollInterval(Duration.ofMillis(50))
			.until(() -> quota(http.get("/warm-up")) == 1_000 && !store(app).status().fallbackActive());
	}

	/** The master serving a key's slot: the others answer MOVED. */
	private static HostAndPort ownerOf(List<HostAndPort> masters, String key) {
		for (HostAndPort master : masters) {
			try {
				RedisTestSupport.command(master.host(), master.port(), Duration.ofSeconds(2), "EXISTS", key);
				return master;
			}
			catch (IOException ex) {
				// MOVED: another master serves the slot
			}
		}
		throw new IllegalStateException("No master of " + masters + " serves " + key);
	}

	private static Object redisCommand(int port, String... args) throws IOException {
		return redisCommand(port, Duration.ofSeconds(2), args);
	}

	private static Object redisCommand(int port, Duration timeout, String... args) throws IOException {
		return RedisTestSupport.command(RedisTestSupport.LOOPBACK, port, timeout, args);
	}

	/** Plain HTTP/1.1 to the application on loopback. */
	private static String limitId(String name) {
		return RateLimit.of(name, Algorithm.TOKEN_BUCKET, 1, Duration.ofHours(1)).id();
	}

	private static final class Http {

		private final HttpClient client = HttpClient.newBuilder()
			.version(HttpClient.Version.HTTP_1_1)
			.connectTimeout(Duration.ofSeconds(5))
			.build();

		private final int port;

		Http(ConfigurableApplicationContext app) {
			this.port = app.getEnvironment().getRequiredProperty("local.server.port", Integer.class);
		}

		HttpResponse<String> get(String path) {
			HttpRequest request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + this.port + path))
				.timeout(Duration.ofSeconds(10))
				.GET()
				.build();
			try {
				return this.client.send(request, HttpResponse.BodyHandlers.ofString());
			}
			catch (IOException ex) {
				throw new IllegalStateException("GET " + path + " failed", ex);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				throw new IllegalStateException("Interrupted during GET " + path, ex);
			}
		}

	}

	@SpringBootConfiguration(proxyBeanMethods = false)
	@EnableAutoConfiguration
	@Import(Endpoints.class)
	static class FailureApplication {

		@Bean
		SecurityFilterChain permitAll(HttpSecurity http) throws Exception {
			return http.authorizeHttpRequests((requests) -> requests.anyRequest().permitAll()).build();
		}

	}

	@RestController
	static class Endpoints {

		@RateLimited(name = "warm-up", capacity = 1_000, period = "1h", key = KeySource.GLOBAL)
		@GetMapping("/warm-up")
		String warmUp() {
			return "warm";
		}

		@GetMapping("/unlimited")
		String unlimited() {
			return "unlimited";
		}

		@RateLimited(name = "calls", algorithm = Algorithm.CONCURRENCY, capacity = 2, period = "1m",
				key = KeySource.GLOBAL)
		@GetMapping("/call")
		String call() {
			return "called";
		}

		@RateLimited(name = "open", capacity = 20, period = "1h", key = KeySource.GLOBAL)
		@GetMapping("/open")
		String open() {
			return "open";
		}

		@RateLimited(name = "open-after", capacity = 20, period = "1h", key = KeySource.GLOBAL)
		@GetMapping("/open-after")
		String openAfter() {
			return "open after";
		}

		/** Fail-closed through ratelimit.policies.login.fail-mode=closed. */
		@RateLimited(name = "login", capacity = 100, period = "1h", key = KeySource.GLOBAL)
		@GetMapping("/closed")
		String closed() {
			return "closed";
		}

	}

}
