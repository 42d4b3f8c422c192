package io.github.ratelimit.internal.redis;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicIntegerArray;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import org.springframework.boot.Banner;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.security.config.annotation.web.builders.HttpSecurity;
import org.springframework.security.web.SecurityFilterChain;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.KeySource;
import io.github.ratelimit.RateLimited;
import io.github.ratelimit.store.RateLimit;
import io.github.ratelimit.store.RateLimitStore;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * Two instances of one application sharing a Redis server enforce one global limit
 * together: however concurrent clients spread their requests over the instances, exactly
 * the capacity is admitted. With the in-memory store each instance would admit it.
 */
class DistributedRateLimitTest {

	private static final int CAPACITY = 50;

	private static final int CLIENTS = 16;

	private static final int REQUESTS = 400;

	private static final String KEY_PREFIX = "distributed:";

	private static final List<ConfigurableApplicationContext> instances = new ArrayList<>();

	private static final List<Integer> ports = new ArrayList<>();

	private static HttpClient client;

	@BeforeAll
	static void startTwoInstances() {
		client = HttpClient.newBuilder()
			.version(HttpClient.Version.HTTP_1_1)
			.connectTimeout(Duration.ofSeconds(5))
			.build();
		for (int i = 0; i < 2; i++) {
			ConfigurableApplicationContext instance = start();
			instances.add(instance);
			ports.add(instance.getEnvironment().getRequiredProperty("local.server.port", Integer.class));
			assertThat(instance.getBean(RateLimitStore.class).name()).isEqualTo("redis");
		}
		assertThat(ports).doesNotHaveDuplicates();
	}

	@AfterAll
	static void stopInstances() {
		for (ConfigurableApplicationContext instance : instances) {
			instance.close();
			assertThat(instance.isActive()).isFalse();
		}
		instances.clear();
		ports.clear();
	}

	@ParameterizedTest
	@EnumSource(value = Algorithm.class, names = { "TOKEN_BUCKET", "SLIDING_WINDOW_LOG", "SLIDING_WINDOW_COUNTER",
			"FIXED_WINDOW" })
	void twoInstancesAdmitExactlyTheCapacityOfAGlobalLimitBetweenThem(Algorithm algorithm) throws Exception {
		if (algorithm == Algorithm.FIXED_WINDOW) {
			// a window boundary in the middle of the run would rightly admit a second capacity;
			// a daily window makes that (and so a skipped test) rare
			assumeTrue(secondsLeftInTheRedisDay() > 60, "too close to the end of the daily window");
		}
		RedisTestServer.shared().flushAll();
		String path = "/shared/" + algorithm.name().toLowerCase(Locale.ROOT);
		AtomicIntegerArray admitted = new AtomicIntegerArray(2);
		AtomicIntegerArray rejected = new AtomicIntegerArray(2);
		Queue<String> unexpected = new ConcurrentLinkedQueue<>();
		AtomicInteger next = new AtomicInteger();
		CountDownLatch start = new CountDownLatch(1);
		ExecutorService executor = Executors.newFixedThreadPool(CLIENTS);
		try {
			List<Future<?>> clients = new ArrayList<>();
			for (int i = 0; i < CLIENTS; i++) {
				clients.add(executor.submit(() -> {
					start.await();
					for (int n = next.getAndIncrement(); n < REQUESTS; n = next.getAndIncrement()) {
						int instance = n % 2;
						HttpResponse<String> response = get(ports.get(instance), path);
						switch (response.statusCode()) {
							case 200 -> admitted.incrementAndGet(instance);
							case 429 -> rejected.incrementAndGet(instance);
							default -> unexpected.add(response.statusCode() + " " + response.body());
						}
					}
					return null;
				}));
			}
			start.countDown();
			for (Future<?> future : clients) {
				future.get(60, TimeUnit.SECONDS);
			}
		}
		finally {
			executor.shutdownNow();
			assertThat(executor.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
		}
		String counts = "admitted " + admitted + ", rejected " + rejected + " (instance 1, instance 2)";
		assertThat(unexpected).as(counts).isEmpty();
		assertThat(admitted.get(0) + admitted.get(1)).as(counts).isEqualTo(CAPACITY);
		assertThat(rejected.get(0) + rejected.get(1)).as(counts).isEqualTo(REQUESTS - CAPACITY);
		assertThat(admitted.get(0) + rejected.get(0)).as(counts).isEqualTo(REQUESTS / 2);
		StringRedisTemplate redis = new StringRedisTemplate(RedisTestServer.shared().connectionFactory());
		String key = KEY_PREFIX + "{global}:"
				+ RateLimit.of("GET " + path, Algorithm.TOKEN_BUCKET, CAPACITY, Duration.ofMinutes(1)).id();
		assertThat(redis.keys(KEY_PREFIX + "*")).contains(key);
		assertThat(redis.getExpire(key)).isPositive();
	}

	private static ConfigurableApplicationContext start() {
		RedisTestServer redis = RedisTestServer.shared();
		return new SpringApplicationBuilder(SharedLimitsApplication.class).web(WebApplicationType.SERVLET)
			.bannerMode(Banner.Mode.OFF)
			.run("--server.port=0", "--server.address=127.0.0.1", "--spring.data.redis.host=" + redis.host(),
					"--spring.data.redis.port=" + redis.port(), "--ratelimit.store=redis",
					"--ratelimit.redis.key-prefix=" + KEY_PREFIX,
					// a loaded machine must not push decisions to each instance's local fallback
					"--ratelimit.redis.timeout=10s");
	}

	private static long secondsLeftInTheRedisDay() throws IOException {
		RedisTestServer redis = RedisTestServer.shared();
		List<?> time = (List<?>) RedisTestSupport.command(redis.host(), redis.port(), RedisTestServer.COMMAND_TIMEOUT,
				"TIME");
		return 86400 - Long.parseLong((String) time.get(0)) % 86400;
	}

	private static HttpResponse<String> get(int port, String path) throws IOException, InterruptedException {
		HttpRequest request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
			.timeout(Duration.ofSeconds(10))
			.GET()
			.build();
		return client.send(request, HttpResponse.BodyHandlers.ofString());
	}

	/**
	 * One global limit per algorithm, shared by every caller of every instance.
	 */
	@SpringBootConfiguration
	// every endpoint is public: no generated user and password
	@EnableAutoConfiguration(
			excludeName = "org.springframework.boot.security.autoconfigure.UserDetailsServiceAutoConfiguration")
	@Import(SharedLimitsApplication.SharedController.class)
	static class SharedLimitsApplication {

		@Bean
		SecurityFilterChain security(HttpSecurity http) throws Exception {
			return http.authorizeHttpRequests((requests) -> requests.anyRequest().permitAll()).build();
		}

		@RestController
		static class SharedController {

			@RateLimited(algorithm = Algorithm.TOKEN_BUCKET, capacity = CAPACITY, period = "1h",
					key = KeySource.GLOBAL)
			@GetMapping("/shared/token_bucket")
			String tokenBucket() {
				return "admitted";
			}

			@RateLimited(algorithm = Algorithm.SLIDING_WINDOW_LOG, capacity = CAPACITY, period = "1h",
					key = KeySource.GLOBAL)
			@GetMapping("/shared/sliding_window_log")
			String slidingWindowLog() {
				return "admitted";
			}

			@RateLimited(algorithm = Algorithm.SLIDING_WINDOW_COUNTER, capacity = CAPACITY, period = "1h",
					key = KeySource.GLOBAL)
			@GetMapping("/shared/sliding_window_counter")
			String slidingWindowCounter() {
				return "admitted";
			}

			@RateLimited(algorithm = Algorithm.FIXED_WINDOW, capacity = CAPACITY, period = "1d",
					key = KeySource.GLOBAL)
			@GetMapping("/shared/fixed_window")
			String fixedWindow() {
				return "admitted";
			}

		}

	}

}
