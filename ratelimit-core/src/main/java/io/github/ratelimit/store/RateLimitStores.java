package io.github.ratelimit.store;

import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.Objects;
import java.util.Set;
import java.util.function.BiConsumer;
import java.util.function.Consumer;
import java.util.function.LongSupplier;

import io.github.ratelimit.internal.atomic.AtomicStateRateLimitStore;
import io.github.ratelimit.internal.core.CircuitBreaker;
import io.github.ratelimit.internal.core.FailoverRateLimitStore;
import io.github.ratelimit.internal.core.FailoverSettings;
import io.github.ratelimit.internal.core.ObservedRateLimitStore;
import io.github.ratelimit.internal.core.RateLimitClock;
import io.github.ratelimit.store.RateLimitObserver;
import io.github.ratelimit.internal.core.ShareStore;
import io.github.ratelimit.internal.core.ThrottledLog;
import io.github.ratelimit.internal.local.LocalFirstRateLimitStore;
import io.github.ratelimit.internal.local.LocalFirstSettings;
import io.github.ratelimit.internal.memory.InMemoryRateLimitStore;

/**
 * Creates the in-memory store and composes a remote store with the decorators of
 * ratelimit-core, innermost first: local-first shares, failure observation, and a local
 * fallback behind a circuit breaker.
 * <pre>{@code
 * RateLimitStore store = RateLimitStores.builder(redis)
 *     .localFirst(Duration.ofMillis(10), Set.of("payments"), 10_000)
 *     .fallback(RateLimitStores.inMemory(100_000), 0.5)
 *     .build();
 * }</pre>
 * A store with a sync thread or shares (local-first) is {@link AutoCloseable}: close what
 * {@link Builder#build()} returns when the application stops.
 */
public final class RateLimitStores {

	private RateLimitStores() {
	}

	/**
	 * An in-memory store on the system clock, keeping at most {@code maximumKeys} buckets
	 * (the least recently used go first).
	 * @param maximumKeys most buckets kept, positive
	 * @return the store, named {@value RateLimitResult#MEMORY}
	 */
	public static RateLimitStore inMemory(long maximumKeys) {
		return new InMemoryRateLimitStore(RateLimitClock.system(), maximumKeys);
	}

	/**
	 * A store over an engine's {@link AtomicStateStorage}, deciding every algorithm at the
	 * storage's time with the Java code of the in-memory store, on the calling thread.
	 * @param storage the storage, which reads and writes states atomically
	 * @return the store, named after the storage
	 */
	public static RateLimitStore atomic(AtomicStateStorage storage) {
		return AtomicStateRateLimitStore.builder(storage).build();
	}

	/**
	 * A store over an engine's {@link AtomicStateStorage} that blocks (such as a database
	 * over JDBC). At most {@code threads} storage calls run at once; a call beyond them
	 * fails at once, for a {@link Builder#fallback fallback} to decide. A caller that may
	 * block runs its call itself, without a hand-off between threads, and is interrupted
	 * after {@code timeout}, which ends a wait for a pooled connection (the storage bounds
	 * its own I/O by the same time; the interrupt never outlives the call). Asynchronous
	 * calls run on threads of the store's own and fail after {@code timeout}, so an event
	 * loop never waits. Close the store when the application stops.
	 * @param storage the storage, which reads and writes states atomically
	 * @param timeout longest wait for one storage call
	 * @param threads most storage calls running at once
	 * @return the store, named after the storage, {@link AutoCloseable}
	 */
	public static RateLimitStore atomic(AtomicStateStorage storage, Duration timeout, int threads) {
		return AtomicStateRateLimitStore.builder(storage).blocking(timeout, threads).build();
	}

	/**
	 * Starts composing decorators around a store.
	 * @param remote the store deciding while it answers, usually shared by instances
	 * @return a builder
	 */
	public static Builder builder(RateLimitStore remote) {
		return new Builder(remote);
	}

	/**
	 * Composes a store chain. Each decorator is added only when its method is called.
	 */
	public static final class Builder {

		private static final System.Logger logger = System.getLogger(RateLimitStores.class.getName());

		private final RateLimitStore remote;

		private RateLimitClock clock = RateLimitClock.system();

		private RateLimitStore fallback;

		private double fallbackFactor;

		private int failureThreshold = 5;

		private Duration probeInterval = Duration.ofSeconds(5);

		private Duration syncInterval;

		private Set<String> exactLimits = Set.of();

		private int maxShares;

		private BiConsumer<String, Throwable> onFailure;

		private Consumer<String> warn = (message) -> logger.log(Level.WARNING, message);

		private Consumer<String> info = (message) -> logger.log(Level.INFO, message);

		private Builder(RateLimitStore remote) {
			this.remote = Objects.requireNonNull(remote, "remote must not be null");
		}

		/**
		 * The time local-first decisions are taken at; the system clock by default.
		 * @param epochMicros microseconds since the epoch
		 * @return this builder
		 */
		public Builder clock(LongSupplier epochMicros) {
			Objects.requireNonNull(epochMicros, "epochMicros must not be null");
			this.clock = epochMicros::getAsLong;
			return this;
		}

		/**
		 * A local store that decides fail-open limits, at {@code factor} of each, while the
		 * remote store fails; fail-closed limits are then refused.
		 * @param local the fallback store, such as {@link RateLimitStores#inMemory(long)}
		 * @param factor share of each limit the fallback enforces, in (0, 1]
		 * @return this builder
		 */
		public Builder fallback(RateLimitStore local, double factor) {
			this.fallback = Objects.requireNonNull(local, "local must not be null");
			this.fallbackFactor = factor;
			return this;
		}

		/**
		 * When the fallback's circuit breaker stops calling the remote store, and when it
		 * probes it again; 5 failures and 5 seconds by default. Failures and recoveries are
		 * logged at most once per probe interval.
		 * @param failureThreshold consecutive failures that open the breaker
		 * @param probeInterval time the open breaker waits before a probe
		 * @return this builder
		 */
		public Builder circuitBreaker(int failureThreshold, Duration probeInterval) {
			this.failureThreshold = failureThreshold;
			this.probeInterval = Objects.requireNonNull(probeInterval, "probeInterval must not be null");
			return this;
		}

		/**
		 * Decides on this instance against shares of the remote store's buckets, settled
		 * with it every {@code syncInterval} on a thread of the store's own, stopped when
		 * the built store is closed. The remote store must be able to grant shares (the
		 * Redis store can).
		 * @param syncInterval time between two syncs
		 * @param exactLimits names of limits the remote store decides on every request
		 * @param maxShares most buckets with a share on this instance
		 * @return this builder
		 */
		public Builder localFirst(Duration syncInterval, Set<String> exactLimits, int maxShares) {
			if (!(this.remote instanceof ShareStore)) {
				throw new IllegalArgumentException(
						"local-first needs a store that grants shares, such as the Redis store: " + this.remote.name());
			}
			this.syncInterval = Objects.requireNonNull(syncInterval, "syncInterval must not be null");
			this.exactLimits = Set.copyOf(exactLimits);
			this.maxShares = maxShares;
			return this;
		}

		/**
		 * Tells {@code onFailure} of every failed call to the remote store, with the store's
		 * name, before the fallback (if any) decides.
		 * @param onFailure the store's name and the failure
		 * @return this builder
		 */
		public Builder observed(BiConsumer<String, Throwable> onFailure) {
			this.onFailure = Objects.requireNonNull(onFailure, "onFailure must not be null");
			return this;
		}

		/**
		 * Where failures (warnings) and recoveries (information) are logged; the JDK's
		 * {@link System.Logger} by default.
		 * @param warn where failure messages go
		 * @param info where recovery messages go
		 * @return this builder
		 */
		public Builder log(Consumer<String> warn, Consumer<String> info) {
			this.warn = Objects.requireNonNull(warn, "warn must not be null");
			this.info = Objects.requireNonNull(info, "info must not be null");
			return this;
		}

		/**
		 * Builds the chain, innermost first: local-first, observed, failover. A local-first
		 * store starts syncing here.
		 * @return the outermost store; {@link AutoCloseable} when it holds resources
		 */
		public RateLimitStore build() {
			long logInterval = this.probeInterval.toNanos();
			// the settings validate before any thread starts
			FailoverSettings failover = (this.fallback != null) ? new FailoverSettings(this.fallbackFactor,
					new CircuitBreaker(this.failureThreshold, logInterval),
					new ThrottledLog(logInterval, System::nanoTime), new ThrottledLog(logInterval, System::nanoTime),
					this.warn, this.info) : null;
			RateLimitStore deciding = this.remote;
			if (this.syncInterval != null) {
				Set<String> exact = this.exactLimits;
				LocalFirstRateLimitStore localFirst = new LocalFirstRateLimitStore(this.remote, (ShareStore) this.remote,
						new LocalFirstSettings(this.clock, this.syncInterval, (limit) -> exact.contains(limit.name()),
								this.maxShares, new ThrottledLog(logInterval, System::nanoTime), this.warn));
				localFirst.start();
				deciding = localFirst;
			}
			if (this.onFailure != null) {
				BiConsumer<String, Throwable> told = this.onFailure;
				deciding = new ObservedRateLimitStore(deciding, new RateLimitObserver() {

					@Override
					public void storeFailed(String store, Throwable failure) {
						told.accept(store, failure);
					}

				});
			}
			return (failover != null) ? new FailoverRateLimitStore(deciding, this.fallback, failover) : deciding;
		}

	}

}
