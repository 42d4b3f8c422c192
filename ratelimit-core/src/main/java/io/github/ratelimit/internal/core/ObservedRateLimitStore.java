package io.github.ratelimit.internal.core;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

import io.github.ratelimit.store.Acquisition;
import io.github.ratelimit.store.BucketSnapshot;
import io.github.ratelimit.store.RateLimit;
import io.github.ratelimit.store.RateLimitObserver;
import io.github.ratelimit.store.RateLimitResult;
import io.github.ratelimit.store.RateLimitStore;
import io.github.ratelimit.store.StoreStatus;

/**
 * Reports every failed call to a store to an observer, then lets the failure through
 * (to the failover store that decides what to do about it).
 */
public final class ObservedRateLimitStore implements RateLimitStore, AutoCloseable {

	private final RateLimitStore delegate;

	private final RateLimitObserver observer;

	/**
	 * Wraps a store.
	 * @param delegate the store
	 * @param observer who is told
	 */
	public ObservedRateLimitStore(RateLimitStore delegate, RateLimitObserver observer) {
		this.delegate = delegate;
		this.observer = observer;
	}

	@Override
	public RateLimitResult tryAcquire(List<Acquisition> acquisitions, long maxDelayMicros) {
		try {
			return this.delegate.tryAcquire(acquisitions, maxDelayMicros);
		}
		catch (RuntimeException ex) {
			this.observer.storeFailed(this.delegate.name(), ex);
			throw ex;
		}
	}

	@Override
	public CompletionStage<RateLimitResult> tryAcquireAsync(List<Acquisition> acquisitions, long maxDelayMicros) {
		CompletionStage<RateLimitResult> decided;
		try {
			decided = this.delegate.tryAcquireAsync(acquisitions, maxDelayMicros);
		}
		catch (RuntimeException ex) {
			this.observer.storeFailed(this.delegate.name(), ex);
			throw ex;
		}
		return decided.whenComplete((result, failure) -> {
			if (failure != null) {
				this.observer.storeFailed(this.delegate.name(), failure);
			}
		});
	}

	@Override
	public void refund(List<Acquisition> acquisitions, RateLimitResult decided) {
		try {
			this.delegate.refund(acquisitions, decided);
		}
		catch (RuntimeException ex) {
			this.observer.storeFailed(this.delegate.name(), ex);
			throw ex;
		}
	}

	@Override
	public CompletionStage<Void> refundAsync(List<Acquisition> acquisitions, RateLimitResult decided) {
		CompletionStage<Void> refunded;
		try {
			refunded = this.delegate.refundAsync(acquisitions, decided);
		}
		catch (RuntimeException ex) {
			this.observer.storeFailed(this.delegate.name(), ex);
			throw ex;
		}
		return refunded.whenComplete((ignored, failure) -> {
			if (failure != null) {
				this.observer.storeFailed(this.delegate.name(), failure);
			}
		});
	}

	/** Arguments that cannot be settled are refused before the store is asked: no store failure. */
	@Override
	public void settle(List<Acquisition> reserved, RateLimitResult decided, long[] actualCosts) {
		RateLimitStore.requireSettleable(reserved, actualCosts);
		try {
			this.delegate.settle(reserved, decided, actualCosts);
		}
		catch (RuntimeException ex) {
			this.observer.storeFailed(this.delegate.name(), ex);
			throw ex;
		}
	}

	@Override
	public CompletionStage<Void> settleAsync(List<Acquisition> reserved, RateLimitResult decided,
			long[] actualCosts) {
		try {
			RateLimitStore.requireSettleable(reserved, actualCosts);
		}
		catch (IllegalArgumentException ex) {
			return CompletableFuture.failedFuture(ex);
		}
		CompletionStage<Void> settled;
		try {
			settled = this.delegate.settleAsync(reserved, decided, actualCosts);
		}
		catch (RuntimeException ex) {
			this.observer.storeFailed(this.delegate.name(), ex);
			throw ex;
		}
		return settled.whenComplete((ignored, failure) -> {
			if (failure != null) {
				this.observer.storeFailed(this.delegate.name(), failure);
			}
		});
	}

	@Override
	public BucketSnapshot inspect(RateLimit limit, String identity) {
		try {
			return this.delegate.inspect(limit, identity);
		}
		catch (RuntimeException ex) {
			this.observer.storeFailed(this.delegate.name(), ex);
			throw ex;
		}
	}

	@Override
	public boolean reset(RateLimit limit, String identity) {
		try {
			return this.delegate.reset(limit, identity);
		}
		catch (RuntimeException ex) {
			this.observer.storeFailed(this.delegate.name(), ex);
			throw ex;
		}
	}

	@Override
	public void resetAll() {
		try {
			this.delegate.resetAll();
		}
		catch (RuntimeException ex) {
			this.observer.storeFailed(this.delegate.name(), ex);
			throw ex;
		}
	}

	@Override
	public String name() {
		return this.delegate.name();
	}

	@Override
	public StoreStatus status() {
		return this.delegate.status();
	}

	/**
	 * Closes the wrapped store when it holds resources of its own, such as the sync thread
	 * and the shares of a local-first store.
	 */
	@Override
	public void close() {
		StoreCloser.close(this.delegate);
	}

}
