package io.github.ratelimit.core;

import java.util.List;

/**
 * Reports every failed call to a store to an observer, then lets the failure through
 * (to the failover store that decides what to do about it).
 */
public final class ObservedRateLimitStore implements RateLimitStore {

	private final RateLimitStore delegate;

	private final String name;

	private final RateLimitObserver observer;

	/**
	 * Wraps a store.
	 * @param delegate the store
	 * @param name its name in reports ({@code redis})
	 * @param observer who is told
	 */
	public ObservedRateLimitStore(RateLimitStore delegate, String name, RateLimitObserver observer) {
		this.delegate = delegate;
		this.name = name;
		this.observer = observer;
	}

	@Override
	public RateLimitResult tryAcquire(List<Acquisition> acquisitions) {
		try {
			return this.delegate.tryAcquire(acquisitions);
		}
		catch (RuntimeException ex) {
			this.observer.storeFailed(this.name, ex);
			throw ex;
		}
	}

	@Override
	public void refund(List<Acquisition> acquisitions, long timestampMicros) {
		try {
			this.delegate.refund(acquisitions, timestampMicros);
		}
		catch (RuntimeException ex) {
			this.observer.storeFailed(this.name, ex);
			throw ex;
		}
	}

	@Override
	public BucketSnapshot inspect(RateLimit limit, String identity) {
		try {
			return this.delegate.inspect(limit, identity);
		}
		catch (RuntimeException ex) {
			this.observer.storeFailed(this.name, ex);
			throw ex;
		}
	}

	@Override
	public boolean reset(RateLimit limit, String identity) {
		try {
			return this.delegate.reset(limit, identity);
		}
		catch (RuntimeException ex) {
			this.observer.storeFailed(this.name, ex);
			throw ex;
		}
	}

	/**
	 * The wrapped store.
	 * @return the store
	 */
	public RateLimitStore getDelegate() {
		return this.delegate;
	}

}
