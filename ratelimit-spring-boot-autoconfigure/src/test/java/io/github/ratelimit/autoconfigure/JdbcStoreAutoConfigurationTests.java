package io.github.ratelimit.autoconfigure;

import java.time.Duration;
import java.util.List;

import javax.sql.DataSource;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DelegatingDataSource;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.internal.jdbc.PostgresTestServer;
import io.github.ratelimit.internal.memory.InMemoryRateLimitStore;
import io.github.ratelimit.store.Acquisition;
import io.github.ratelimit.store.RateLimit;
import io.github.ratelimit.store.RateLimitResult;
import io.github.ratelimit.store.RateLimitStore;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The PostgreSQL store is chosen by {@code ratelimit.store=jdbc} alone, on the
 * application's own DataSource, with its properties checked at startup.
 */
class JdbcStoreAutoConfigurationTests {

	private static final RateLimit LIMIT = RateLimit.of("orders", Algorithm.TOKEN_BUCKET, 5, Duration.ofMinutes(1));

	private final ApplicationContextRunner contextRunner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(RateLimitAutoConfiguration.class));

	/**
	 * The tests' database, behind a DataSource that a closing context cannot close, as a
	 * shared pool must outlive each context.
	 * @return the DataSource
	 */
	static DataSource dataSource() {
		return new DelegatingDataSource(PostgresTestServer.shared().dataSource());
	}

	private ApplicationContextRunner withDataSource() {
		return this.contextRunner.withBean(DataSource.class, JdbcStoreAutoConfigurationTests::dataSource);
	}

	private ApplicationContextRunner withJdbc(String table) {
		return withDataSource().withPropertyValues("ratelimit.store=jdbc", "ratelimit.jdbc.initialize-schema=true",
				"ratelimit.jdbc.table=" + table);
	}

	@Test
	void usesPostgresWhenJdbcIsChosen() {
		withJdbc("chosen_bucket").run((context) -> {
			assertThat(context).hasNotFailed();
			RateLimitStore store = context.getBean(RateLimitStore.class);
			assertThat(store.name()).isEqualTo("jdbc");
			RateLimitResult result = store.tryAcquire(List.of(new Acquisition(LIMIT, "alice", 2)));
			assertThat(result.allowed()).isTrue();
			assertThat(result.store()).isEqualTo("jdbc");
			assertThat(result.decisions().get(0).remaining()).isEqualTo(3);
			Integer rows = new JdbcTemplate(dataSource()).queryForObject("select count(*) from chosen_bucket",
					Integer.class);
			assertThat(rows).isEqualTo(1);
		});
	}

	@Test
	void keepsMemoryWhenTheApplicationHasADataSourceButDoesNotChooseJdbc() {
		withDataSource().run((context) -> {
			assertThat(context).hasNotFailed();
			assertThat(context.getBean(RateLimitStore.class)).isInstanceOf(InMemoryRateLimitStore.class);
		});
	}

	@Test
	void usesPostgresWhenJdbcIsChosenEvenWithRedis() {
		withJdbc("over_redis_bucket")
			.withBean(RedisConnectionFactory.class, () -> new LettuceConnectionFactory("127.0.0.1", 1))
			.run((context) -> {
				assertThat(context).hasNotFailed();
				assertThat(context.getBean(RateLimitStore.class).name()).isEqualTo("jdbc");
			});
	}

	@Test
	void failsNamingTheStoreWhenJdbcIsChosenWithoutADataSource() {
		this.contextRunner.withPropertyValues("ratelimit.store=jdbc").run((context) -> {
			assertThat(context).hasFailed();
			assertThat(context.getStartupFailure()).rootCause()
				.hasMessageContaining("ratelimit.store")
				.hasMessageContaining("no DataSource bean");
		});
	}

	@Test
	void failsNamingTheStoreWhenJdbcIsChosenWithoutSpringJdbc() {
		withDataSource().withClassLoader(new FilteredClassLoader("org.springframework.jdbc"))
			.withPropertyValues("ratelimit.store=jdbc")
			.run((context) -> {
				assertThat(context).hasFailed();
				assertThat(context.getStartupFailure()).rootCause().hasMessageContaining("ratelimit.store");
			});
	}

	@ParameterizedTest
	@CsvSource({ "ratelimit.jdbc.timeout, 0s", "ratelimit.jdbc.threads, 0", "ratelimit.jdbc.failure-threshold, 0",
			"ratelimit.jdbc.probe-interval, 0s", "ratelimit.jdbc.cleanup-interval, -1s",
			"ratelimit.jdbc.cleanup-batch-size, 0", "ratelimit.jdbc.table, buckets;drop table users" })
	void failsAtStartupNamingAnInvalidProperty(String property, String value) {
		withDataSource().withPropertyValues("ratelimit.store=jdbc", property + "=" + value).run((context) -> {
			assertThat(context).hasFailed();
			assertThat(context.getStartupFailure()).rootCause().hasMessageContaining(property);
		});
	}

	@Test
	void failsAtStartupNamingTheNearestPropertyOfAMisspelledOne() {
		withDataSource().withPropertyValues("ratelimit.store=jdbc", "ratelimit.jdbc.tabel=buckets").run((context) -> {
			assertThat(context).hasFailed();
			assertThat(RateLimitStartupValidationTests.analyzeAsBootDoes(context.getStartupFailure()).getDescription())
				.contains("ratelimit.jdbc.tabel is not a known property; did you mean ratelimit.jdbc.table?");
		});
	}

	@Test
	void removesExpiredRowsOnItsOwnThread() {
		withJdbc("cleanup_bucket").withPropertyValues("ratelimit.jdbc.cleanup-interval=100ms").run((context) -> {
			assertThat(context).hasNotFailed();
			JdbcTemplate jdbc = new JdbcTemplate(dataSource());
			for (int i = 0; i < 5; i++) {
				jdbc.update("insert into cleanup_bucket (id, state, expires_at) values (?, null, 0)",
						new byte[] { 42, (byte) i });
			}
			await().atMost(Duration.ofSeconds(10))
				.untilAsserted(() -> assertThat(
						jdbc.queryForObject("select count(*) from cleanup_bucket", Integer.class)).isZero());
		});
	}

}
