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
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.boot.Banner;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.http.ResponseEntity;
import org.springframework.security.config.annotation.web.builders.HttpSecurity;
import org.springframework.security.web.SecurityFilterChain;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.RestController;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.RateLimited;
import io.github.ratelimit.internal.core.Identities;
import io.github.ratelimit.store.Acquisition;
import io.github.ratelimit.store.RateLimit;
import io.github.ratelimit.store.RateLimitStore;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * "At most 2 exports per tenant" held by two instances of one application sharing a real
 * Redis server: 64 concurrent callers spread over both never find 3 exports running for
 * one tenant, whether the exports return, throw or complete asynchronously, and every
 * permit is back once they are done. A permit taken by an instance that died is free
 * again after the lease time.
 */
class ConcurrencyFleetTests {

	private static final int CALLERS = 64;

	private static final int CALLS_PER_CALLER = 8;

	private static final String KEY_PREFIX = "concurrency:";

	/** Exports running now, and the most ever seen running at once, per tenant, across both instances. */
	static final Map<String, AtomicInteger> RUNNING = new ConcurrentHashMap<>();

	static final Map<String, AtomicInteger> MOST_RUNNING = new ConcurrentHashMap<>();

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
			ports.add(port(instance));
			assertThat(instance.getBean(RateLimitStore.class).name()).isEqualTo("redis");
		}
	}

	@AfterAll
	static void stopInstances() {
		instances.forEach(ConfigurableApplicationContext::close);
		instances.clear();
		ports.clear();
	}

	@BeforeEach
	void emptyRedis() {
		RedisTestServer.shared().flushAll();
		RUNNING.clear();
		MOST_RUNNING.clear();
	}

	@Test
	void sixtyFourCallersOnTwoInstancesNeverFindThreeExportsOfATenantRunning() throws Exception {
		String[] variants = { "", "/failing", "/async" };
		String[] tenants = { "acme", "globex" };
		Map<Integer, AtomicInteger> statuses = new ConcurrentHashMap<>();
		Queue<String> unexpected = new ConcurrentLinkedQueue<>();
		AtomicInteger next = new AtomicInteger();
		CountDownLatch start = new CountDownLatch(1);
		ExecutorService executor = Executors.newFixedThreadPool(CALLERS);
		try {
			List<Future<?>> callers = new ArrayList<>();
			for (int c = 0; c < CALLERS; c++) {
				callers.add(executor.submit(() -> {
					start.await();
					for (int i = 0; i < CALLS_PER_CALLER; i++) {
						int n = next.getAndIncrement();
						String variant = variants[n % variants.length];
						String path = "/exports/" + tenants[(n / 3) % tenants.length] + variant;
						HttpResponse<String> response = get(ports.get(n % 2), path);
						statuses.computeIfAbsent(response.statusCode(), (status) -> new AtomicInteger()).incrementAndGet();
						boolean expected = response.statusCode() == 429 || (variant.equals("/failing")
								? response.statusCode() == 500 : response.statusCode() == 200);
						if (!expected) {
							unexpected.add(path + " " + response.statusCode() + " " + response.body());
						}
					}
					return null;
				}));
			}
			start.countDown();
			for (Future<?> caller : callers) {
				caller.get(120, TimeUnit.SECONDS);
			}
		}
		finally {
			executor.shutdownNow();
			assertThat(executor.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
		}
		String seen = "statuses " + statuses + ", most running " + MOST_RUNNING;
		assertThat(unexpected).as(seen).isEmpty();
		assertThat(statuses.values().stream().mapToInt(AtomicInteger::get).sum()).isEqualTo(CALLERS * CALLS_PER_CALLER);
		assertThat(statuses).as(seen).containsKeys(200, 429, 500);
		// the limit held across both instances, and was reached
		assertThat(MOST_RUNNING.get("acme").get()).as(seen).isEqualTo(2);
		assertThat(MOST_RUNNING.get("globex").get()).as(seen).isEqualTo(2);
		// every export that returned, threw or completed later gave its permit back
		StringRedisTemplate redis = new StringRedisTemplate(RedisTestServer.shared().connectionFactory());
		assertThat(redis.keys(KEY_PREFIX + "*")).as("leases left in Redis").isEmpty();
		assertThat(get(ports.get(0), "/exports/acme").statusCode()).isEqualTo(200);
		assertThat(get(ports.get(1), "/exports/acme").statusCode()).isEqualTo(200);
	}

	@Test
	void permitsOfAnInstanceThatDiedAreFreedAfterTheLeaseTime() throws Exception {
		// another instance takes the only permit of "briefly" for acme on its own connection,
		// then dies: its call never completes and no release ever reaches Redis
		RedisTestServer redis = RedisTestServer.shared();
		LettuceConnectionFactory doomed = new LettuceConnectionFactory(
				new RedisStandaloneConfiguration(redis.host(), redis.port()));
		doomed.afterPropertiesSet();
		doomed.start();
		RateLimit briefly = RateLimit.of("briefly", Algorithm.CONCURRENCY, 1, Duration.ofSeconds(2));
		try {
			RedisRateLimitStore store = RedisRateLimitStore.builder(doomed).keyPrefix(KEY_PREFIX).build();
			assertThat(store.tryAcquire(List.of(new Acquisition(briefly, Identities.expression("acme"), 1))).allowed())
				.isTrue();
		}
		finally {
			doomed.destroy();
		}
		long heldSince = System.nanoTime();
		HttpResponse<String> rejected = get(ports.get(0), "/briefly/acme");
		assertThat(rejected.statusCode()).isEqualTo(429);
		assertThat(rejected.headers().firstValue("Retry-After")).hasValue("1");
		assertThat(get(ports.get(1), "/briefly/globex").statusCode()).as("another tenant").isEqualTo(200);
		long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
		int status = 429;
		while (status == 429 && System.nanoTime() < deadline) {
			Thread.sleep(100);
			status = get(ports.get(1), "/briefly/acme").statusCode();
		}
		assertThat(status).as("admitted again once the lease ran out").isEqualTo(200);
		assertThat(Duration.ofNanos(System.nanoTime() - heldSince)).isGreaterThan(Duration.ofMillis(1_500));
	}

	private static ConfigurableApplicationContext start() {
		RedisTestServer redis = RedisTestServer.shared();
		return new SpringApplicationBuilder(ExportsApplication.class).web(WebApplicationType.SERVLET)
			.bannerMode(Banner.Mode.OFF)
			.run("--server.port=0", "--server.address=127.0.0.1", "--server.shutdown=immediate",
					"--spring.data.redis.host=" + redis.host(), "--spring.data.redis.port=" + redis.port(),
					"--ratelimit.store=redis", "--ratelimit.redis.key-prefix=" + KEY_PREFIX,
					// a loaded machine must not push decisions to each instance's local fallback
					"--ratelimit.redis.timeout=10s");
	}

	private static int port(ConfigurableApplicationContext instance) {
		return instance.getEnvironment().getRequiredProperty("local.server.port", Integer.class);
	}

	private static HttpRequest request(int port, String path) {
		return HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
			.timeout(Duration.ofSeconds(30))
			.GET()
			.build();
	}

	private static HttpResponse<String> get(int port, String path) throws IOException, InterruptedException {
		return client.send(request(port, path), HttpResponse.BodyHandlers.ofString());
	}

	/** Counts an export of a tenant as running until it ends. */
	static void running(String tenant) {
		int now = RUNNING.computeIfAbsent(tenant, (t) -> new AtomicInteger()).incrementAndGet();
		MOST_RUNNING.computeIfAbsent(tenant, (t) -> new AtomicInteger()).accumulateAndGet(now, Math::max);
	}

	static void ended(String tenant) {
		RUNNING.get(tenant).decrementAndGet();
	}

	static void work() {
		try {
			Thread.sleep(10);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}

	@SpringBootConfiguration
	// every endpoint is public: no generated user and password
	@EnableAutoConfiguration(
			excludeName = "org.springframework.boot.security.autoconfigure.UserDetailsServiceAutoConfiguration")
	@Import(ExportsApplication.Exports.class)
	static class ExportsApplication {

		@Bean
		SecurityFilterChain security(HttpSecurity http) throws Exception {
			return http.authorizeHttpRequests((requests) -> requests.anyRequest().permitAll()).build();
		}

		@RestController
		static class Exports {

			@RateLimited(name = "exports", algorithm = Algorithm.CONCURRENCY, capacity = 2, period = "1m",
					keyExpression = "#tenant")
			@GetMapping("/exports/{tenant}")
			String export(@PathVariable String tenant) {
				running(tenant);
				try {
					work();
					return "exported";
				}
				finally {
					ended(tenant);
				}
			}

			@RateLimited(name = "exports", algorithm = Algorithm.CONCURRENCY, capacity = 2, period = "1m",
					keyExpression = "#tenant")
			@GetMapping("/exports/{tenant}/failing")
			String failingExport(@PathVariable String tenant) {
				running(tenant);
				try {
					work();
					throw new IllegalStateException("export failed");
				}
				finally {
					ended(tenant);
				}
			}

			@RateLimited(name = "exports", algorithm = Algorithm.CONCURRENCY, capacity = 2, period = "1m",
					keyExpression = "#tenant")
			@GetMapping("/exports/{tenant}/async")
			CompletableFuture<String> asyncExport(@PathVariable String tenant) {
				running(tenant);
				return CompletableFuture.supplyAsync(() -> {
					work();
					ended(tenant);
					return "exported later";
				}, CompletableFuture.delayedExecutor(5, TimeUnit.MILLISECONDS));
			}

			/** A failed export is answered 500 here, without the container logging it as an error. */
			@ExceptionHandler(IllegalStateException.class)
			ResponseEntity<String> failed(IllegalStateException ex) {
				return ResponseEntity.internalServerError().body(ex.getMessage());
			}

			@RateLimited(name = "briefly", algorithm = Algorithm.CONCURRENCY, capacity = 1, period = "2s",
					keyExpression = "#tenant")
			@GetMapping("/briefly/{tenant}")
			String briefly(@PathVariable String tenant) {
				return "done";
			}

		}

	}

}
