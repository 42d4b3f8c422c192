package io.github.ratelimit.autoconfigure;

import java.time.Duration;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.IntUnaryOperator;

import javax.sql.DataSource;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.springframework.beans.factory.DisposableBean;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import io.github.ratelimit.RateLimitConfigurationException;
import io.github.ratelimit.internal.atomic.AtomicStateRateLimitStore;
import io.github.ratelimit.internal.core.FailoverRateLimitStore;
import io.github.ratelimit.internal.core.RateLimitClock;
import io.github.ratelimit.internal.core.ThrottledLog;
import io.github.ratelimit.internal.jdbc.JdbcStateStorage;
import io.github.ratelimit.internal.memory.InMemoryRateLimitStore;
import io.github.ratelimit.store.RateLimitObserver;
import io.github.ratelimit.store.RateLimitStore;
import io.github.ratelimit.store.RateLimitStores;

/**
 * The PostgreSQL store, when {@code ratelimit.store=jdbc} names it: buckets in a table of
 * the application's {@link DataSource}, decided at the database's time, with the same
 * fallback and circuit breaker as Redis. A request waits on JDBC no longer than
 * {@code ratelimit.jdbc.timeout}, at most {@code ratelimit.jdbc.threads} calls run at
 * once, and reactive decisions run on threads of the store's own, never on an event loop;
 * expired rows are removed in bounded batches on a thread of its own. All stop with the
 * context.
 */
@Configuration(proxyBeanMethods = false)
@ConditionalOnClass(name = { "org.springframework.jdbc.core.simple.JdbcClient",
		"io.github.ratelimit.internal.jdbc.JdbcStateStorage" })
@ConditionalOnProperty(name = "ratelimit.store", havingValue = "jdbc")
@ConditionalOnBean(type = "javax.sql.DataSource")
@ConditionalOnMissingBean(RateLimitStore.class)
@EnableConfigurationProperties(RateLimitJdbcProperties.class)
class RateLimitJdbcStoreConfiguration implements DisposableBean {

	private static final Log logger = LogFactory.getLog(FailoverRateLimitStore.class);

	private volatile AtomicStateRateLimitStore jdbcStore;

	private volatile ScheduledExecutorService cleanup;

	@Bean
	RateLimitStore rateLimitStore(DataSource dataSource, RateLimitProperties properties,
			RateLimitJdbcProperties jdbc, RateLimitClock rateLimitClock,
			ObjectProvider<RateLimitObserver> observers) {
		RateLimitPropertiesMapper.validateGeneral(properties);
		validate(jdbc);
		JdbcStateStorage storage;
		try {
			storage = JdbcStateStorage.builder(dataSource).table(jdbc.getTable()).timeout(jdbc.getTimeout()).build();
		}
		catch (IllegalArgumentException ex) {
			throw new RateLimitConfigurationException("ratelimit.jdbc.table", ex.getMessage(),
					"Use a plain table name such as ratelimit_bucket, optionally qualified by its schema");
		}
		if (jdbc.isInitializeSchema()) {
			storage.createSchema();
		}
		// the database decides at its own clock unless the application (a test) brought one
		AtomicStateRateLimitStore primary = AtomicStateRateLimitStore.builder(storage)
			.clock(RateLimitClock.isSystem(rateLimitClock) ? null : rateLimitClock)
			.blocking(jdbc.getTimeout(), jdbc.getThreads())
			.build();
		this.jdbcStore = primary;
		this.cleanup = startCleanup(storage::removeExpired, jdbc.getCleanupInterval(), jdbc.getCleanupBatchSize());
		RateLimitStores.Builder chain = RateLimitStores.builder(primary)
			.clock(rateLimitClock::nowMicros)
			.fallback(new InMemoryRateLimitStore(rateLimitClock, properties.getMemory().getMaximumKeys()),
					properties.getFallbackFactor())
			.circuitBreaker(jdbc.getFailureThreshold(), jdbc.getProbeInterval())
			.log(logger::warn, logger::info);
		RateLimitObserver observer = RateLimitObservers.of(observers);
		if (observer != RateLimitObserver.NONE) {
			chain.observed(observer::storeFailed);
		}
		return chain.build();
	}

	@Override
	public void destroy() {
		ScheduledExecutorService scheduler = this.cleanup;
		if (scheduler != null) {
			scheduler.shutdownNow();
		}
		AtomicStateRateLimitStore store = this.jdbcStore;
		if (store != null) {
			store.close();
		}
	}

	/**
	 * Removes expired rows every interval, a batch at a time while batches come back full,
	 * so that identities seen once leave no lasting rows; a failing database is logged at
	 * most once per interval (the fallback already reports it) and tried again next time.
	 */
	private static ScheduledExecutorService startCleanup(IntUnaryOperator removeExpired, Duration interval,
			int batchSize) {
		ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor((task) -> {
			Thread thread = new Thread(task, "ratelimit-jdbc-cleanup");
			thread.setDaemon(true);
			return thread;
		});
		ThrottledLog failures = new ThrottledLog(interval.toNanos(), System::nanoTime);
		long millis = interval.toMillis();
		scheduler.scheduleWithFixedDelay(() -> {
			try {
				while (removeExpired.applyAsInt(batchSize) == batchSize && !Thread.currentThread().isInterrupted()) {
					// a full batch: more rows may have expired
				}
			}
			catch (RuntimeException ex) {
				failures.log("Expired rate limit rows could not be removed: " + ex.getMessage(), logger::warn);
			}
		}, millis, millis, TimeUnit.MILLISECONDS);
		return scheduler;
	}

	private static void validate(RateLimitJdbcProperties jdbc) {
		requirePositive("ratelimit.jdbc.timeout", jdbc.getTimeout(),
				"Use a short duration such as 500ms: it is added to a request when the database hangs");
		requirePositive("ratelimit.jdbc.probe-interval", jdbc.getProbeInterval(), "Use a duration such as 5s");
		requirePositive("ratelimit.jdbc.cleanup-interval", jdbc.getCleanupInterval(), "Use a duration such as 30s");
		requireAtLeastOne("ratelimit.jdbc.threads", jdbc.getThreads(),
				"Use about as many as the DataSource's pool has connections, such as 32");
		requireAtLeastOne("ratelimit.jdbc.failure-threshold", jdbc.getFailureThreshold(),
				"Use a small count such as 5");
		requireAtLeastOne("ratelimit.jdbc.cleanup-batch-size", jdbc.getCleanupBatchSize(),
				"Use a batch such as 1000");
	}

	private static void requirePositive(String property, Duration value, String action) {
		if (value == null || value.isNegative() || value.isZero()) {
			throw new RateLimitConfigurationException(property, "must be positive: " + value, action);
		}
	}

	private static void requireAtLeastOne(String property, int value, String action) {
		if (value < 1) {
			throw new RateLimitConfigurationException(property, "must be at least 1: " + value, action);
		}
	}

}
