package io.github.ratelimit.autoconfigure;

import java.time.Duration;

import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * Configuration properties of the PostgreSQL store, which {@code ratelimit.store=jdbc}
 * selects: buckets in one table of the application's own {@code DataSource}.
 */
@ConfigurationProperties("ratelimit.jdbc")
public class RateLimitJdbcProperties {

	/**
	 * Table holding the buckets, optionally qualified by its schema.
	 */
	private String table = "ratelimit_bucket";

	/**
	 * Whether the table and its index are created at startup when missing.
	 */
	private boolean initializeSchema;

	/**
	 * Longest time a request waits for the database, a pooled connection included; then the fallback (or a 503) answers.
	 */
	private Duration timeout = Duration.ofMillis(500);

	/**
	 * Most database calls of the store running at once; a call beyond them is decided by the fallback at once.
	 */
	private int threads = 32;

	/**
	 * Consecutive database failures after which the circuit breaker stops calling the database.
	 */
	private int failureThreshold = 5;

	/**
	 * How long the open circuit breaker waits before probing the database again.
	 */
	private Duration probeInterval = Duration.ofSeconds(5);

	/**
	 * Time between two removals of expired rows.
	 */
	private Duration cleanupInterval = Duration.ofSeconds(30);

	/**
	 * Most expired rows one statement removes; a removal repeats while batches come back full.
	 */
	private int cleanupBatchSize = 1000;

	public String getTable() {
		return this.table;
	}

	public void setTable(String table) {
		this.table = table;
	}

	public boolean isInitializeSchema() {
		return this.initializeSchema;
	}

	public void setInitializeSchema(boolean initializeSchema) {
		this.initializeSchema = initializeSchema;
	}

	public Duration getTimeout() {
		return this.timeout;
	}

	public void setTimeout(Duration timeout) {
		this.timeout = timeout;
	}

	public int getThreads() {
		return this.threads;
	}

	public void setThreads(int threads) {
		this.threads = threads;
	}

	public int getFailureThreshold() {
		return this.failureThreshold;
	}

	public void setFailureThreshold(int failureThreshold) {
		this.failureThreshold = failureThreshold;
	}

	public Duration getProbeInterval() {
		return this.probeInterval;
	}

	public void setProbeInterval(Duration probeInterval) {
		this.probeInterval = probeInterval;
	}

	public Duration getCleanupInterval() {
		return this.cleanupInterval;
	}

	public void setCleanupInterval(Duration cleanupInterval) {
		this.cleanupInterval = cleanupInterval;
	}

	public int getCleanupBatchSize() {
		return this.cleanupBatchSize;
	}

	public void setCleanupBatchSize(int cleanupBatchSize) {
		this.cleanupBatchSize = cleanupBatchSize;
	}

}
