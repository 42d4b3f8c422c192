package io.github.ratelimit.autoconfigure;

import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

import javax.sql.DataSource;

import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.internal.core.RateLimitWaiter;
import io.github.ratelimit.internal.core.RateLimiter;
import io.github.ratelimit.internal.redis.RedisTestServer;
import io.github.ratelimit.store.Acquisition;
import io.github.ratelimit.store.RateLimit;
import io.github.ratelimit.store.RateLimitResult;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The threads the starter starts belong to the application context: whatever the store,
 * once a context that decided (synchronously, asynchronously, and waiting for a permit)
 * is closed, none of the threads it started, all named {@code ratelimit-*}, survives.
 * Contexts are opened and closed several times, as a test suite or a dev-tools restart
 * does.
 */
class ContextThreadsTests {

	private static final int CONTEXTS = 3;

	/** Waits for a permit of a limit that grants one at once. */
	private static final int WAITS = 4;

	private static final Duration THREADS_END_WITHIN = Duration.ofSeconds(10);

	private final ApplicationContextRunner contextRunner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(RateLimitAutoConfiguration.class));

	@Test
	void memoryStoreLeavesNoThreadBehind() {
		openAndClose(this.contextRunner.withPropertyValues("ratelimit.store=memory"), "ratelimit-wait");
	}

	@Test
	void redisStoreLeavesNoThreadBehind() {
		openAndClose(redis(), "ratelimit-wait", "ratelimit-redis-async");
	}

	@Test
	void localFirstRedisStoreLeavesNoThreadBehind() {
		openAndClose(redis().withPropertyValues("ratelimit.redis.mode=local-first",
				"ratelimit.redis.sync-interval=20ms"), "ratelimit-wait", "ratelimit-redis-async",
				"ratelimit-share-sync");
	}

	@Test
	void jdbcStoreLeavesNoThreadBehind() {
		openAndClose(this.contextRunner.withBean(DataSource.class, JdbcStoreAutoConfigurationTests::dataSource)
			.withPropertyValues("ratelimit.store=jdbc", "ratelimit.jdbc.initialize-schema=true",
					"ratelimit.jdbc.table=context_threads_bucket"),
				"ratelimit-wait", "ratelimit-jdbc", "ratelimit-jdbc-cleanup");
	}

	private ApplicationContextRunner redis() {
		RedisTestServer server = RedisTestServer.shared();
		return this.contextRunner.withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class))
			.withPropertyValues("ratelimit.store=redis", "spring.data.redis.host=" + server.host(),
					"spring.data.redis.port=" + server.port());
	}

	/**
	 * Opens and closes contexts that decide, each time checking that the threads named
	 * were started, then that no thread started survives the close.
	 */
	private void openAndClose(ApplicationContextRunner runner, String... started) {
		for (int i = 0; i < CONTEXTS; i++) {
			Set<Thread> before = rateLimitThreads();
			String identity = "context-" + i + "-" + System.nanoTime();
			runner.run((context) -> {
				decide(context, identity);
				assertThat(names(rateLimitThreads(), before)).contains(started);
			});
			await().atMost(THREADS_END_WITHIN)
				.untilAsserted(() -> assertThat(names(rateLimitThreads(), before)).isEmpty());
		}
	}

	/** Decides as requests do: synchronously, asynchronously, and waiting for a permit. */
	private void decide(AssertableApplicationContext context, String identity) throws Exception {
		assertThat(context).hasNotFailed();
		RateLimiter limiter = context.getBean(RateLimiter.class);
		RateLimitWaiter waiter = context.getBean(RateLimitWaiter.class);
		RateLimit plenty = RateLimit.of("plenty", Algorithm.TOKEN_BUCKET, 1_000, Duration.ofMinutes(1));
		List<Acquisition> one = List.of(new Acquisition(plenty, identity, 1));
		// the first calls may meet a cold connection, which the fallback answers meanwhile
		assertThat(limiter.acquire(one).allowed()).isTrue();
		RateLimitResult async = limiter.acquireAsync(one, 0).toCompletableFuture().get(10, TimeUnit.SECONDS);
		assertThat(async.allowed()).isTrue();
		// one permit per 200ms: the later ones wait for theirs, timed on the waiter's scheduler
		RateLimit scarce = RateLimit.of("scarce", Algorithm.TOKEN_BUCKET, 1, Duration.ofMillis(200));
		List<Acquisition> scarceOne = List.of(new Acquisition(scarce, identity, 1));
		for (int i = 0; i < WAITS; i++) {
			RateLimitResult waited = waiter.acquireAsync(scarceOne, Duration.ofSeconds(5)).get(10, TimeUnit.SECONDS);
			assertThat(waited.allowed()).isTrue();
		}
	}

	private static Set<Thread> rateLimitThreads() {
		return Thread.getAllStackTraces()
			.keySet()
			.stream()
			.filter((thread) -> thread.isAlive() && thread.getName().startsWith("ratelimit-"))
			.collect(Collectors.toSet());
	}

	/** The names of the threads not among {@code before}, started by the context. */
	private static List<String> names(Set<Thread> threads, Set<Thread> before) {
		return threads.stream().filter((thread) -> !before.contains(thread)).map(Thread::getName).sorted().toList();
	}

}
