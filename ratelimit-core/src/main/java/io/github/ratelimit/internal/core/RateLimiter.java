package io.github.ratelimit.internal.core;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ThreadLocalRandom;

import io.github.ratelimit.store.Acquisition;
import io.github.ratelimit.store.BucketKey;
import io.github.ratelimit.store.MutableDecision;
import io.github.ratelimit.store.RateLimit;
import io.github.ratelimit.store.RateLimitDecision;
import io.github.ratelimit.store.RateLimitObserver;
import io.github.ratelimit.store.RateLimitResult;
import io.github.ratelimit.store.RateLimitStore;

/**
 * Decides the limits of one request together through a {@link RateLimitStore}. Limits
 * that draw from the same bucket (two places naming one policy, for the same identity)
 * are merged first, so the bucket pays the sum of their costs atomically; a sum above
 * the capacity asks for the whole capacity, since more could never be admitted.
 */
public final class RateLimiter {

	private final RateLimitStore store;

	private final RateLimitObserver observer;

	private final ReleaseWait.Signals releases = new ReleaseWait.Signals();

	/** What settled calls reserved and were charged, per limit: touched only by settling. */
	private final SettledCosts settledCosts = new SettledCosts();

	/**
	 * Whether the store decides in memory, so that only one decision in
	 * {@link RateLimitObserver#MEMORY_TIMED_ONE_IN} is timed: reading the clock twice costs
	 * about what such a decision does.
	 */
	private final boolean sampled;

	/** Whether the store decides on the calling thread whichever way it is asked. */
	private final boolean decidesOnCallingThread;

	/**
	 * Creates a limiter.
	 * @param store the store holding the buckets
	 */
	public RateLimiter(RateLimitStore store) {
		this(store, RateLimitObserver.NONE);
	}

	/**
	 * Creates a limiter that reports every decision.
	 * @param store the store holding the buckets
	 * @param observer told about every decision
	 */
	public RateLimiter(RateLimitStore store, RateLimitObserver observer) {
		this.store = store;
		this.observer = observer;
		this.sampled = RateLimitResult.MEMORY.equals(store.name());
		this.decidesOnCallingThread = keepsDefaultAsync(store);
	}

	/**
	 * Whether a store keeps the SPI's default {@link RateLimitStore#tryAcquireAsync}, which
	 * decides on the calling thread: a store that does no I/O.
	 */
	private static boolean keepsDefaultAsync(RateLimitStore store) {
		try {
			return store.getClass()
				.getMethod("tryAcquireAsync", List.class, long.class)
				.getDeclaringClass() == RateLimitStore.class;
		}
		catch (NoSuchMethodException | SecurityException ex) {
			return false;
		}
	}

	/**
	 * Whether the store decides on the calling thread even when asked without blocking:
	 * it keeps the SPI's default {@link RateLimitStore#tryAcquireAsync}, as the in-memory
	 * store does. An event loop may then decide in place, as the asynchronous call would
	 * have decided on it anyway.
	 * @return whether deciding never leaves the calling thread
	 */
	public boolean decidesOnCallingThread() {
		return this.decidesOnCallingThread;
	}

	/** Marks a decision that is not timed: no reading of the clock is this value. */
	private static final long NOT_STARTED = Long.MIN_VALUE;

	/** When a decision starts, for its time: the clock, unless this one is not sampled. */
	private long start() {
		if (this.sampled && ThreadLocalRandom.current().nextInt(RateLimitObserver.MEMORY_TIMED_ONE_IN) != 0) {
			return NOT_STARTED;
		}
		return System.nanoTime();
	}

	/** The time a decision took, or {@link RateLimitObserver#UNTIMED}. */
	private static long since(long start) {
		return (start == NOT_STARTED) ? RateLimitObserver.UNTIMED : Math.max(0, System.nanoTime() - start);
	}

	/**
	 * Decides every acquisition together, all-or-nothing.
	 * @param acquisitions the acquisitions, possibly naming one bucket several times
	 * @return one decision per acquisition, in order
	 */
	public RateLimitResult acquire(List<Acquisition> acquisitions) {
		return acquire(acquisitions, 0);
	}

	/**
	 * Decides every acquisition together, all-or-nothing, letting token and leaky buckets
	 * reserve a slot up to {@code maxDelayMicros} ahead (see
	 * {@link RateLimitStore#tryAcquire(List, long)}).
	 * @param acquisitions the acquisitions, possibly naming one bucket several times
	 * @param maxDelayMicros longest wait for a reserved slot; 0 reserves nothing
	 * @return one decision per acquisition, in order
	 */
	public RateLimitResult acquire(List<Acquisition> acquisitions, long maxDelayMicros) {
		if (acquisitions.isEmpty()) {
			return new RateLimitResult(List.of(), 0);
		}
		if (this.observer == RateLimitObserver.NONE) {
			// nobody reads the time the store took, so do not read the clock for it
			return decide(acquisitions, maxDelayMicros);
		}
		long start = start();
		RateLimitResult result = decide(acquisitions, maxDelayMicros);
		this.observer.decided(acquisitions, result, since(start));
		return result;
	}

	/**
	 * Decides one limit for one identity, the common case of a request with a single
	 * limit, and writes the decision into {@code into} instead of returning a result: with
	 * the in-memory store and no observer, deciding allocates nothing. An observer is told
	 * as for {@link #acquire(List, long)}, with {@link MutableDecision#toResult()}.
	 * @param limit the limit
	 * @param identity the identity owning the bucket, already normalised and bounded
	 * @param cost quota units to take, at least 1 and at most the limit's capacity
	 * @param maxDelayMicros longest wait for a reserved slot; 0 reserves nothing
	 * @param into where the decision, its time and the deciding store are written
	 * @return whether the request may proceed: the limit admitted it, or it only records
	 * (shadow mode)
	 * @throws IllegalArgumentException when the cost is not positive or exceeds the
	 * capacity
	 */
	public boolean acquire(RateLimit limit, String identity, long cost, long maxDelayMicros, MutableDecision into) {
		if (this.observer == RateLimitObserver.NONE) {
			return this.store.tryAcquire(limit, identity, cost, maxDelayMicros, into);
		}
		long start = start();
		boolean admitted = this.store.tryAcquire(limit, identity, cost, maxDelayMicros, into);
		// observers learn which identity was decided, as on the list path
		this.observer.decided(limit, identity, cost, into, since(start));
		return admitted;
	}

	/**
	 * Decides like {@link #acquire(List, long)} without holding the calling thread while
	 * the store works (see {@link RateLimitStore#tryAcquireAsync}).
	 * @param acquisitions the acquisitions, possibly naming one bucket several times
	 * @param maxDelayMicros longest wait for a reserved slot; 0 reserves nothing
	 * @return the decisions, one per acquisition, in order
	 */
	public CompletionStage<RateLimitResult> acquireAsync(List<Acquisition> acquisitions, long maxDelayMicros) {
		if (acquisitions.isEmpty()) {
			return CompletableFuture.completedFuture(new RateLimitResult(List.of(), 0));
		}
		long start = (this.observer != RateLimitObserver.NONE) ? start() : NOT_STARTED;
		List<Acquisition> merged = merge(acquisitions);
		CompletionStage<RateLimitResult> decided = this.store.tryAcquireAsync(merged, maxDelayMicros);
		if (decided instanceof CompletableFuture<RateLimitResult> future && future.isDone()
				&& !future.isCompletedExceptionally()) {
			// decided on the calling thread (the in-memory store): no stage to chain
			RateLimitResult result = future.join();
			RateLimitResult unmerged = decidedAsync(acquisitions, merged, result, start);
			return (unmerged == result) ? future : CompletableFuture.completedFuture(unmerged);
		}
		return decided.thenApply((result) -> decidedAsync(acquisitions, merged, result, start));
	}

	/** The result of an asynchronous decision as asked, told to the observer. */
	private RateLimitResult decidedAsync(List<Acquisition> acquisitions, List<Acquisition> merged,
			RateLimitResult result, long start) {
		RateLimitResult unmerged = unmerge(acquisitions, merged, result);
		if (this.observer != RateLimitObserver.NONE) {
			this.observer.decided(acquisitions, unmerged, since(start));
		}
		return unmerged;
	}

	private RateLimitResult decide(List<Acquisition> acquisitions, long maxDelayMicros) {
		List<Acquisition> merged = merge(acquisitions);
		return unmerge(acquisitions, merged, this.store.tryAcquire(merged, maxDelayMicros));
	}

	/** One decision per acquisition as asked, from the decisions of the merged buckets. */
	private static RateLimitResult unmerge(List<Acquisition> acquisitions, List<Acquisition> merged,
			RateLimitResult result) {
		if (merged.size() == acquisitions.size()) {
			return result;
		}
		Map<BucketKey, RateLimitDecision> byKey = new LinkedHashMap<>();
		for (int i = 0; i < merged.size(); i++) {
			byKey.put(merged.get(i).key(), result.decisions().get(i));
		}
		List<RateLimitDecision> decisions = new ArrayList<>(acquisitions.size());
		for (Acquisition acquisition : acquisitions) {
			decisions.add(byKey.get(acquisition.key()));
		}
		return new RateLimitResult(decisions, result.timestampMicros(), result.store(), result.refundTo());
	}

	/**
	 * Gives back what an admitted {@link #acquire} consumed, to the store that decided it
	 * (with a failover store, the remote store or its fallback), and tells the observer.
	 * @param acquisitions the acquisitions as passed to {@link #acquire}
	 * @param decided the result of that call
	 */
	public void refund(List<Acquisition> acquisitions, RateLimitResult decided) {
		if (!acquisitions.isEmpty()) {
			try {
				this.store.refund(merge(acquisitions), decided);
			}
			finally {
				// a release the store failed to take still ends the call: waiters try again
				this.releases.released(acquisitions);
			}
			this.observer.refunded(acquisitions, decided);
		}
	}

	/**
	 * Starts watching for releases of the permits held in flight among acquisitions, on
	 * this limiter: a caller about to decide them, and to wait if it is rejected, watches
	 * first so that a release in between is not missed.
	 * @param acquisitions the acquisitions about to be decided
	 * @return the wait, to be closed when done, or {@code null} when no acquisition is of
	 * a limit on calls in flight
	 */
	public ReleaseWait watchReleases(List<Acquisition> acquisitions) {
		return this.releases.watch(acquisitions);
	}

	/** How many buckets callers watch for releases now; none once every wait is over. */
	int watchedBuckets() {
		return this.releases.watched();
	}

	/**
	 * Gives back like {@link #refund} without holding the calling thread while the store
	 * works (see {@link RateLimitStore#refundAsync}); the observer hears of it once the
	 * store has given back.
	 * @param acquisitions the acquisitions as passed to {@link #acquireAsync}
	 * @param decided the result of that call
	 * @return completes when the store has given back, exceptionally when it failed to
	 */
	public CompletionStage<Void> refundAsync(List<Acquisition> acquisitions, RateLimitResult decided) {
		if (acquisitions.isEmpty()) {
			return CompletableFuture.completedFuture(null);
		}
		CompletionStage<Void> refunded;
		try {
			refunded = this.store.refundAsync(merge(acquisitions), decided);
		}
		catch (RuntimeException ex) {
			this.releases.released(acquisitions);
			return CompletableFuture.failedFuture(ex);
		}
		return refunded.whenComplete((done, failure) -> this.releases.released(acquisitions))
			.thenRun(() -> this.observer.refunded(acquisitions, decided));
	}

	/**
	 * Settles what an admitted {@link #acquire} reserved at the actual costs, with the
	 * store that decided it (see {@link RateLimitStore#settle}), and tells the observer.
	 * Acquisitions of one bucket are merged as they were when decided: the bucket is
	 * settled at the sum of their actual costs against what it took for them. A bucket
	 * settled at exactly what it reserved is left out, since that changes nothing: a call
	 * whose every cost was estimated right makes no store call at all.
	 * @param reserved the acquisitions as passed to {@link #acquire}
	 * @param decided the result of that call
	 * @param actualCosts the actual cost of each acquisition, in order
	 * @throws IllegalArgumentException when the actual costs do not match the acquisitions
	 * one for one, one is negative, or an acquisition is of a limit on calls in flight
	 */
	public void settle(List<Acquisition> reserved, RateLimitResult decided, long[] actualCosts) {
		if (!reserved.isEmpty()) {
			Merged merged = mergeSettled(reserved, actualCosts).changed();
			if (!merged.reserved().isEmpty()) {
				this.store.settle(merged.reserved(), decided, merged.actualCosts());
			}
			this.settledCosts.record(reserved, actualCosts);
			if (this.observer != RateLimitObserver.NONE) {
				this.observer.settled(reserved, decided, actualCosts.clone());
			}
		}
	}

	/**
	 * What calls settled through this limiter reserved and were charged, per limit,
	 * since it was created.
	 * @return the totals, updated as calls settle
	 */
	public SettledCosts settledCosts() {
		return this.settledCosts;
	}

	/**
	 * Settles like {@link #settle} without holding the calling thread while the store
	 * works (see {@link RateLimitStore#settleAsync}); the observer hears of it once the
	 * store has settled.
	 * @param reserved the acquisitions as passed to {@link #acquireAsync}
	 * @param decided the result of that call
	 * @param actualCosts the actual cost of each acquisition, in order
	 * @return completes when the store has settled, exceptionally when it failed to
	 */
	public CompletionStage<Void> settleAsync(List<Acquisition> reserved, RateLimitResult decided,
			long[] actualCosts) {
		if (reserved.isEmpty()) {
			return CompletableFuture.completedFuture(null);
		}
		Merged merged;
		CompletionStage<Void> settled;
		try {
			merged = mergeSettled(reserved, actualCosts).changed();
			settled = merged.reserved().isEmpty() ? CompletableFuture.completedFuture(null)
					: this.store.settleAsync(merged.reserved(), decided, merged.actualCosts());
		}
		catch (RuntimeException ex) {
			return CompletableFuture.failedFuture(ex);
		}
		long[] actual = actualCosts.clone();
		if (this.observer == RateLimitObserver.NONE) {
			return settled.thenRun(() -> this.settledCosts.record(reserved, actual));
		}
		return settled.thenRun(() -> {
			this.settledCosts.record(reserved, actual);
			this.observer.settled(reserved, decided, actual);
		});
	}

	/**
	 * Acquisitions merged per bucket as {@link #merge} merges them, each with the sum of
	 * the actual costs of what was merged into it.
	 */
	private static Merged mergeSettled(List<Acquisition> reserved, long[] actualCosts) {
		if (actualCosts.length != reserved.size()) {
			throw new IllegalArgumentException("one actual cost per acquisition is needed: " + actualCosts.length
					+ " for " + reserved.size() + " acquisitions");
		}
		List<Acquisition> merged = merge(reserved);
		if (merged == reserved) {
			// stores read the costs before they return, and keep none
			return new Merged(reserved, actualCosts);
		}
		long[] sums = new long[merged.size()];
		for (int i = 0; i < reserved.size(); i++) {
			if (actualCosts[i] < 0) {
				throw new IllegalArgumentException("actual cost must not be negative: " + actualCosts[i]);
			}
			BucketKey key = reserved.get(i).key();
			for (int j = 0; j < merged.size(); j++) {
				if (merged.get(j).key().equals(key)) {
					sums[j] = Math.addExact(sums[j], actualCosts[i]);
					break;
				}
			}
		}
		return new Merged(merged, sums);
	}

	/** Acquisitions of distinct buckets with their actual costs. */
	private record Merged(List<Acquisition> reserved, long[] actualCosts) {

		/**
		 * Only the acquisitions whose actual cost differs from what they reserved: settling
		 * at the reservation changes nothing, so a call whose every cost was estimated
		 * right costs the store no call (on Redis, no round trip).
		 */
		Merged changed() {
			// checked here, as the store would, since a call settled at its reservations never reaches it
			RateLimitStore.requireSettleable(this.reserved, this.actualCosts);
			int changed = 0;
			for (int i = 0; i < this.actualCosts.length; i++) {
				if (this.actualCosts[i] != this.reserved.get(i).cost()) {
					changed++;
				}
			}
			if (changed == this.actualCosts.length) {
				return this;
			}
			List<Acquisition> acquisitions = new ArrayList<>(changed);
			long[] costs = new long[changed];
			for (int i = 0; i < this.actualCosts.length; i++) {
				if (this.actualCosts[i] != this.reserved.get(i).cost()) {
					costs[acquisitions.size()] = this.actualCosts[i];
					acquisitions.add(this.reserved.get(i));
				}
			}
			return new Merged(acquisitions, costs);
		}

	}

	/**
	 * The store deciding.
	 * @return the store
	 */
	public RateLimitStore getStore() {
		return this.store;
	}

	private static List<Acquisition> merge(List<Acquisition> acquisitions) {
		if (acquisitions.size() == 1) {
			return acquisitions;
		}
		Map<BucketKey, Acquisition> merged = new LinkedHashMap<>();
		for (Acquisition acquisition : acquisitions) {
			merged.merge(acquisition.key(), acquisition, (a, b) -> new Acquisition(a.limit(), a.identity(),
					Math.min(a.limit().capacity(), a.cost() + b.cost())));
		}
		return (merged.size() == acquisitions.size()) ? acquisitions : List.copyOf(merged.values());
	}

}
