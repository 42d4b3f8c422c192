package io.github.ratelimit.internal.pipeline;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicInteger;

import io.github.ratelimit.RateLimitUnavailableException;
import io.github.ratelimit.internal.memory.InMemoryRateLimitStore;
import io.github.ratelimit.store.Acquisition;
import io.github.ratelimit.store.BucketSnapshot;
import io.github.ratelimit.store.RateLimit;
import io.github.ratelimit.store.RateLimitResult;
import io.github.ratelimit.store.RateLimitStore;

/**
 * Answers every asynchronous call already completed, so continuations run on the
 * calling thread, and fails every blocking refund.
 */
public final class AsyncOnlyStore implements RateLimitStore {

	private final InMemoryRateLimitStore delegate;

	final AtomicInteger asyncRefunds = new AtomicInteger();

	/** When set, deciding this limit fails as a store that is down. */
	RateLimit unavailable;

	/** When set, asynchronous decisions are made once it completes. */
	CompletableFuture<Void> gate;

	/**
	 * Wraps a store.
	 * @param delegate decides
	 */
	public AsyncOnlyStore(InMemoryRateLimitStore delegate) {
		this.delegate = delegate;
	}

	/**
	 * Decides asynchronous calls only once {@code gate} completes, as a store waiting for
	 * its server does.
	 * @param gate completes when the store may answer
	 */
	public void holdDecisionsUntil(CompletableFuture<Void> gate) {
		this.gate = gate;
	}

	/**
	 * Makes deciding a limit fail as a store that is down.
	 * @param limit the limit whose decisions fail
	 */
	public void failDecisionsOf(RateLimit limit) {
		this.unavailable = limit;
	}

	/**
	 * How many asynchronous refunds the store was asked for.
	 * @return the count
	 */
	public int asyncRefunds() {
		return this.asyncRefunds.get();
	}

	@Override
	public RateLimitResult tryAcquire(List<Acquisition> acquisitions, long maxDelayMicros) {
		if (this.unavailable != null && acquisitions.get(0).limit().equals(this.unavailable)) {
			throw new RateLimitUnavailableException(List.of(this.unavailable.name()), Duration.ofSeconds(1),
					new IllegalStateException("down"));
		}
		return this.delegate.tryAcquire(acquisitions, maxDelayMicros);
	}

	@Override
	public CompletionStage<RateLimitResult> tryAcquireAsync(List<Acquisition> acquisitions, long maxDelayMicros) {
		if (this.gate == null) {
			try {
				return CompletableFuture.completedFuture(tryAcquire(acquisitions, maxDelayMicros));
			}
			catch (RuntimeException ex) {
				return CompletableFuture.failedFuture(ex);
			}
		}
		return this.gate.thenApply((opened) -> tryAcquire(acquisitions, maxDelayMicros));
	}

	@Override
	public void refund(List<Acquisition> acquisitions, RateLimitResult decided) {
		throw new AssertionError("a blocking refund on the asynchronous path");
	}

	@Override
	public CompletionStage<Void> refundAsync(List<Acquisition> acquisitions, RateLimitResult decided) {
		this.asyncRefunds.incrementAndGet();
		this.delegate.refund(acquisitions, decided);
		return CompletableFuture.completedFuture(null);
	}

	@Override
	public BucketSnapshot inspect(RateLimit limit, String identity) {
		return this.delegate.inspect(limit, identity);
	}

}
