package io.github.ratelimit.internal.core;

import java.util.ArrayList;
import java.util.List;

import io.github.ratelimit.store.Acquisition;
import io.github.ratelimit.store.RateLimitResult;
import io.github.ratelimit.store.RateLimitStore;

/**
 * Passes every call to a store, one at a time, and records the delay of each decision in
 * the order the store made them.
 */
public final class RecordingStore implements RateLimitStore {

	private final RateLimitStore delegate;

	private final List<Long> delays = new ArrayList<>();

	/**
	 * Wraps a store.
	 * @param delegate the store deciding
	 */
	public RecordingStore(RateLimitStore delegate) {
		this.delegate = delegate;
	}

	@Override
	public synchronized RateLimitResult tryAcquire(List<Acquisition> acquisitions, long maxDelayMicros) {
		return record(this.delegate.tryAcquire(acquisitions, maxDelayMicros));
	}

	@Override
	public synchronized void refund(List<Acquisition> acquisitions, RateLimitResult decided) {
		this.delegate.refund(acquisitions, decided);
	}

	/**
	 * The delay of every decision so far ({@link RateLimitResult#delayMicros()}), in order.
	 * @return microseconds
	 */
	public synchronized List<Long> delaysInDecisionOrder() {
		return List.copyOf(this.delays);
	}

	private RateLimitResult record(RateLimitResult result) {
		this.delays.add(result.delayMicros());
		return result;
	}

}
