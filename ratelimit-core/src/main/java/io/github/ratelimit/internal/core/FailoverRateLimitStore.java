package io.github.ratelimit.internal.core;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;

import io.github.ratelimit.FailMode;
import io.github.ratelimit.RateLimitUnavailableException;
import io.github.ratelimit.store.Acquisition;
import io.github.ratelimit.store.BucketSnapshot;
import io.github.ratelimit.store.RateLimit;
import io.github.ratelimit.store.RateLimitResult;
import io.github.ratelimit.store.RateLimitStore;
import io.github.ratelimit.store.StoreStatus;

/**
 * Puts a remote store behind a circuit breaker and a local fallback. While the remote
 * store answers, it decides. When it fails or times out, fail-open limits are decided by
 * a local store enforcing {@code fallbackFactor} of each limit, and fail-closed limits
 * throw {@link RateLimitUnavailableException}. After repeated failures the breaker stops
 * calling the remote store and probes it again after its open time, so decisions return
 * to it automatically once it recovers. Failures and recoveries are logged at most once
 * per interval.
 */
public final class FailoverRateLimitStore implements RateLimitStore, AutoCloseable {

	private final RateLimitStore primary;

	private final RateLimitStore fallback;

	private final double fallbackFactor;

	private final CircuitBreaker breaker;

	private final ThrottledLog failureLog;

	private final ThrottledLog recoveryLog;

	private final Consumer<String> warn;

	private final Consumer<String> info;

	private final Map<RateLimit, RateLimit> reduced = new ConcurrentHashMap<>();

	private final AtomicBoolean fallbackActive = new AtomicBoolean();

	/**
	 * Creates a failover store.
	 * @param primary the remote store
	 * @param fallback the local store deciding while the remote one fails
	 * @param settings the share of each limit the fallback enforces, the breaker, and
	 * where failures and recoveries are logged
	 */
	public FailoverRateLimitStore(RateLimitStore primary, RateLimitStore fallback, FailoverSettings settings) {
		this.primary = primary;
		this.fallback = fallback;
		this.fallbackFactor = settings.fallbackFactor();
		this.breaker = settings.breaker();
		this.failureLog = settings.failureLog();
		this.recoveryLog = settings.recoveryLog();
		this.warn = settings.warn();
		this.info = settings.info();
	}

	@Override
	public RateLimitResult tryAcquire(List<Acquisition> acquisitions, long maxDelayMicros) {
		RuntimeException failure = null;
		if (this.breaker.tryAcquirePermission()) {
			try {
				RateLimitResult result = this.primary.tryAcquire(acquisitions, maxDelayMicros);
				onSuccess();
				return result;
			}
			catch (RuntimeException ex) {
				failure = ex;
				onFailure(ex);
			}
			catch (Error ex) {
				// never leave a half-open breaker waiting for a probe that died
				onFailure(new IllegalStateException(ex.toString(), ex));
				throw ex;
			}
		}
		return decideLocally(acquisitions, failure, maxDelayMicros);
	}

	/**
	 * Decides on the remote store without holding the calling thread, and locally (on the
	 * thread completing the remote call) when it fails, exactly as {@link #tryAcquire}.
	 */
	@Override
	public CompletionStage<RateLimitResult> tryAcquireAsync(List<Acquisition> acquisitions, long maxDelayMicros) {
		if (!this.breaker.tryAcquirePermission()) {
			return decideLocallyAsync(acquisitions, null, maxDelayMicros);
		}
		CompletionStage<RateLimitResult> remote;
		try {
			remote = this.primary.tryAcquireAsync(acquisitions, maxDelayMicros);
		}
		catch (RuntimeException ex) {
			remote = CompletableFuture.failedFuture(ex);
		}
		return remote.handle((result, failure) -> {
			if (failure == null) {
				onSuccess();
				return CompletableFuture.completedFuture(result);
			}
			RuntimeException cause = asRuntime(failure);
			onFailure(cause);
			return decideLocallyAsync(acquisitions, cause, maxDelayMicros);
		}).thenCompose((next) -> next);
	}

	private CompletionStage<RateLimitResult> decideLocallyAsync(List<Acquisition> acquisitions,
			RuntimeException failure, long maxDelayMicros) {
		try {
			return CompletableFuture.completedFuture(decideLocally(acquisitions, failure, maxDelayMicros));
		}
		catch (RuntimeException ex) {
			return CompletableFuture.failedFuture(ex);
		}
	}

	private static RuntimeException asRuntime(Throwable failure) {
		Throwable cause = (failure instanceof CompletionException && failure.getCause() != null) ? failure.getCause()
				: failure;
		return (cause instanceof RuntimeException runtime) ? runtime : new IllegalStateException(cause.toString(), cause);
	}

	/**
	 * Gives back what a store consumed, to the store that decided it: the local fallback
	 * (at its reduced quota) when {@code decided} came from it (its
	 * {@link RateLimitResult#refundTo()} is the fallback; its store name plays no part), the
	 * remote store otherwise, even when the fallback has taken over or handed back since.
	 */
	@Override
	public void refund(List<Acquisition> acquisitions, RateLimitResult decided) {
		if (decided.refundTo() == this.fallback) {
			this.fallback.refund(reduce(acquisitions), decided);
			return;
		}
		try {
			this.primary.refund(acquisitions, decided);
		}
		catch (RuntimeException ex) {
			// a refund is a courtesy: the request was rejected anyway
			this.failureLog.log("Rate limit store failed to refund: " + ex, this.warn);
		}
	}

	/**
	 * Gives back like {@link #refund} without holding the calling thread: the remote
	 * store's refund is sent asynchronously, and its failure is logged, never passed on.
	 */
	@Override
	public CompletionStage<Void> refundAsync(List<Acquisition> acquisitions, RateLimitResult decided) {
		if (decided.refundTo() == this.fallback) {
			return this.fallback.refundAsync(reduce(acquisitions), decided);
		}
		CompletionStage<Void> remote;
		try {
			remote = this.primary.refundAsync(acquisitions, decided);
		}
		catch (RuntimeException ex) {
			remote = CompletableFuture.failedFuture(ex);
		}
		return remote.exceptionally((failure) -> {
			this.failureLog.log("Rate limit store failed to refund: " + asRuntime(failure), this.warn);
			return null;
		});
	}

	/**
	 * Settles with the store that decided, as {@link #refund} gives back: the local
	 * fallback (at its reduced quota, the reservation as it took it) when {@code decided}
	 * came from it, the remote store otherwise. A failure of the remote store is logged,
	 * never thrown: the call it settles has ended, and must not fail for its bookkeeping.
	 */
	@Override
	public void settle(List<Acquisition> reserved, RateLimitResult decided, long[] actualCosts) {
		RateLimitStore.requireSettleable(reserved, actualCosts);
		if (decided.refundTo() == this.fallback) {
			this.fallback.settle(reduce(reserved), decided, actualCosts);
			return;
		}
		try {
			this.primary.settle(reserved, decided, actualCosts);
		}
		catch (RuntimeException ex) {
			this.failureLog.log("Rate limit store failed to settle costs: " + ex, this.warn);
		}
	}

	/**
	 * Settles like {@link #settle} without holding the calling thread: the remote store's
	 * settlement is sent asynchronously, and its failure is logged, never passed on.
	 */
	@Override
	public CompletionStage<Void> settleAsync(List<Acquisition> reserved, RateLimitResult decided,
			long[] actualCosts) {
		try {
			RateLimitStore.requireSettleable(reserved, actualCosts);
		}
		catch (IllegalArgumentException ex) {
			return CompletableFuture.failedFuture(ex);
		}
		if (decided.refundTo() == this.fallback) {
			return this.fallback.settleAsync(reduce(reserved), decided, actualCosts);
		}
		CompletionStage<Void> remote;
		try {
			remote = this.primary.settleAsync(reserved, decided, actualCosts);
		}
		catch (RuntimeException ex) {
			remote = CompletableFuture.failedFuture(ex);
		}
		return remote.exceptionally((failure) -> {
			this.failureLog.log("Rate limit store failed to settle costs: " + asRuntime(failure), this.warn);
			return null;
		});
	}

	/**
	 * Reads the bucket from the store deciding now: the local fallback (at its reduced
	 * quota) while it is active or when the remote store fails to answer, the remote
	 * store otherwise.
	 */
	@Override
	public BucketSnapshot inspect(RateLimit limit, String identity) {
		if (!this.fallbackActive.get()) {
			try {
				return this.primary.inspect(limit, identity);
			}
			catch (RuntimeException ex) {
				this.failureLog.log("Rate limit store failed to inspect a bucket: " + ex, this.warn);
			}
		}
		return this.fallback.inspect(reduce(limit), identity).answeredBy(RateLimitResult.FALLBACK);
	}

	/**
	 * Forgets the bucket in both stores, so that neither the remote store nor a later
	 * failover holds it against the identity. A failure of the remote store is thrown
	 * after the fallback's bucket is gone.
	 */
	@Override
	public boolean reset(RateLimit limit, String identity) {
		boolean local = this.fallback.reset(limit, identity);
		return this.primary.reset(limit, identity) || local;
	}

	/**
	 * Forgets every bucket in both stores, the fallback's first, as {@link #reset} does for
	 * one bucket.
	 */
	@Override
	public void resetAll() {
		this.fallback.resetAll();
		this.primary.resetAll();
	}

	/** The remote store's name: the fallback only stands in for it. */
	@Override
	public String name() {
		return this.primary.name();
	}

	/**
	 * Which store decides now, the breaker's state, what the remote store keeps on this
	 * instance (a local-first store's shares), and the buckets the local fallback keeps
	 * (reported under {@code fallback}).
	 */
	@Override
	public StoreStatus status() {
		List<StoreStatus.LocalBuckets> buckets = new ArrayList<>(this.primary.status().buckets());
		for (StoreStatus.LocalBuckets kept : this.fallback.status().buckets()) {
			buckets.add(new StoreStatus.LocalBuckets(RateLimitResult.FALLBACK, kept.count(), kept.maximum()));
		}
		String name = name();
		return new StoreStatus(name, this.fallbackActive.get() ? RateLimitResult.FALLBACK : name,
				this.breaker.state().name(), buckets);
	}

	private RateLimitResult decideLocally(List<Acquisition> acquisitions, RuntimeException failure,
			long maxDelayMicros) {
		this.fallbackActive.set(true);
		List<String> closed = acquisitions.stream()
			.filter((acquisition) -> acquisition.limit().failMode() == FailMode.CLOSED && !acquisition.limit().shadow())
			.map((acquisition) -> acquisition.limit().name())
			.distinct()
			.toList();
		if (!closed.isEmpty()) {
			long wait = Math.max(this.breaker.nanosUntilProbe(), 1_000_000_000L);
			throw new RateLimitUnavailableException(closed, Duration.ofNanos(wait), failure);
		}
		return this.fallback.tryAcquire(reduce(acquisitions), maxDelayMicros).decidedBy(RateLimitResult.FALLBACK, this.fallback);
	}

	private List<Acquisition> reduce(List<Acquisition> acquisitions) {
		List<Acquisition> reducedAcquisitions = new ArrayList<>(acquisitions.size());
		for (Acquisition acquisition : acquisitions) {
			RateLimit limit = reduce(acquisition.limit());
			reducedAcquisitions.add(new Acquisition(limit, acquisition.identity(),
					Math.min(acquisition.cost(), limit.capacity())));
		}
		return reducedAcquisitions;
	}

	private RateLimit reduce(RateLimit limit) {
		return this.reduced.computeIfAbsent(limit, (original) -> original.scaledBy(this.fallbackFactor));
	}

	private void onSuccess() {
		this.breaker.onSuccess();
		if (this.breaker.state() != CircuitBreaker.State.CLOSED) {
			// a call let through before the breaker opened: not a recovery
			return;
		}
		// one thread reports the switch back; a store failing now and then between
		// successes recovers as often as it fails, so this is throttled too
		if (this.fallbackActive.get() && this.fallbackActive.compareAndSet(true, false)) {
			this.recoveryLog.log("Rate limit store recovered; decisions are back on it", this.info);
		}
	}

	private void onFailure(RuntimeException ex) {
		boolean opened = this.breaker.onFailure();
		String message = "Rate limit store failed (" + ex.getClass().getSimpleName() + ": " + ex.getMessage()
				+ "); the local fallback decides fail-open limits at " + this.fallbackFactor + " of their quota"
				+ (opened ? "; circuit breaker opened" : "");
		if (opened) {
			this.warn.accept(message);
		}
		else {
			this.failureLog.log(message, this.warn);
		}
	}

	/**
	 * Closes the wrapped store when it holds resources of its own, such as the sync thread
	 * and the shares of a local-first store.
	 */
	@Override
	public void close() {
		StoreCloser.close(this.primary);
	}

}
