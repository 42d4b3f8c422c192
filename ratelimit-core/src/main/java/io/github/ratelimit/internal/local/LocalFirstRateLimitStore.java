package io.github.ratelimit.internal.local;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;

import io.github.ratelimit.internal.core.AlgorithmSpec;
import io.github.ratelimit.internal.core.RateLimitClock;
import io.github.ratelimit.internal.core.ShareGrant;
import io.github.ratelimit.internal.core.ShareRequest;
import io.github.ratelimit.internal.core.ShareStore;
import io.github.ratelimit.store.Acquisition;
import io.github.ratelimit.store.BucketSnapshot;
import io.github.ratelimit.store.MutableDecision;
import io.github.ratelimit.store.RateLimit;
import io.github.ratelimit.store.RateLimitDecision;
import io.github.ratelimit.store.RateLimitResult;
import io.github.ratelimit.store.RateLimitStore;
import io.github.ratelimit.store.StoreStatus;

/**
 * Decides on this instance, against shares of each bucket granted by a shared store, and
 * settles with that store in batches: Redis load grows with the number of active buckets
 * and the sync rate, not with requests.
 * <p>
 * A share is units of a bucket that the shared store has already counted as taken (a
 * {@link ShareStore grant}), so an instance spending its share never admits what the
 * bucket did not have: instances together never exceed a limit, whatever the sync
 * interval. What the interval trades is the other direction: units one instance holds are
 * not available to another until they are given back.
 * <ul>
 * <li>A request whose bucket has a share large enough is decided here, in memory, and
 * its result says so: store {@value RateLimitResult#LOCAL}, for metrics. The store's
 * {@link #name()} stays the shared store's, for health and the actuator.</li>
 * <li>A request whose share is used up asks the shared store, in the one call that
 * decides it, for more: about two sync intervals of its bucket's recent demand. When the
 * store has fewer units left than asked, or rejects, the share asks again at the next sync
 * at the earliest, and requests finding it empty meanwhile are rejected here.</li>
 * <li>Every sync interval, {@link #sync()} sends, together (pipelined), one call per
 * bucket that had demand: taking units up to two intervals of its last interval's demand,
 * or giving back what exceeds that. A bucket idle for an interval gives its whole share
 * back and is forgotten after a second one.</li>
 * </ul>
 * Limits whose algorithm cannot be shared (leaky bucket, sliding window log, concurrency),
 * shadow limits, limits the application wants exact, callers reserving a future slot, and
 * buckets beyond the bound on shares are decided by the shared store on every request, as
 * without this store. A share's units are counted in the window they were granted in: a
 * window limit's share lapses when that window ends.
 */
public final class LocalFirstRateLimitStore implements RateLimitStore, AutoCloseable {

	/** Refills a request waits for at most before it asks the shared store itself. */
	private static final int MAX_REFILL_WAITS = 2;

	private final RateLimitStore shared;

	private final ShareStore sharing;

	private final RateLimitClock clock;

	private final ShareTable table;

	private final ShareSyncer syncer;

	private final ShareSpending spending;

	/**
	 * Creates a store deciding against shares of {@code shared}'s buckets.
	 * @param shared the shared store, deciding what is not decided here
	 * @param sharing the shared store's call granting shares
	 * @param settings the clock, the sync interval, the exact limits, the bound on shares
	 * and where failures are logged
	 */
	public LocalFirstRateLimitStore(RateLimitStore shared, ShareStore sharing, LocalFirstSettings settings) {
		this.shared = shared;
		this.sharing = sharing;
		this.clock = settings.clock();
		this.table = new ShareTable(settings.exact(), settings.maxShares());
		this.syncer = new ShareSyncer(shared, sharing, this.table, settings);
		this.spending = new ShareSpending(RateLimitResult.LOCAL, settings.intervalMicros(), this.syncer);
	}

	/**
	 * Starts syncing every interval on a daemon thread of its own, until {@link #close()}.
	 * Each sync waits for the replies of the one before.
	 */
	public void start() {
		this.syncer.start();
	}

	/**
	 * Whether the sync thread runs: from {@link #start()} to {@link #close()}.
	 * @return whether it runs
	 */
	public boolean syncing() {
		return this.syncer.running();
	}

	/**
	 * Stops syncing, the sync thread ended, and gives every share back to the shared
	 * store, waiting a short time for it to answer: units this instance held are not lost
	 * to the others when it stops.
	 */
	@Override
	public void close() {
		this.syncer.close();
	}

	/**
	 * Settles every share with the shared store, all calls sent at once: a share that had
	 * demand in the last interval takes units up to about two intervals of it, or gives
	 * back what exceeds that; an idle share gives everything back, and is forgotten after a
	 * second idle interval.
	 * @return completes when every call has been answered (failures are logged, and leave
	 * the share as it was)
	 */
	public CompletableFuture<Void> sync() {
		return this.syncer.sync();
	}

	@Override
	public RateLimitResult tryAcquire(List<Acquisition> acquisitions, long maxDelayMicros) {
		Share[] owned = this.table.owned(acquisitions, maxDelayMicros);
		if (owned == null) {
			return this.shared.tryAcquire(acquisitions, maxDelayMicros);
		}
		long[] took = new long[owned.length];
		RateLimitResult local = this.spending.decide(acquisitions, owned, took, this.clock.nowMicros());
		if (local != null) {
			return local;
		}
		try {
			return ask(acquisitions, owned, took, 0).toCompletableFuture().join();
		}
		catch (CompletionException ex) {
			Throwable cause = (ex.getCause() != null) ? ex.getCause() : ex;
			if (cause instanceof RuntimeException runtime) {
				throw runtime;
			}
			if (cause instanceof Error error) {
				throw error;
			}
			throw ex;
		}
	}

	@Override
	public CompletionStage<RateLimitResult> tryAcquireAsync(List<Acquisition> acquisitions, long maxDelayMicros) {
		Share[] owned;
		long[] took;
		RateLimitResult local;
		try {
			owned = this.table.owned(acquisitions, maxDelayMicros);
			if (owned == null) {
				return this.shared.tryAcquireAsync(acquisitions, maxDelayMicros);
			}
			took = new long[owned.length];
			local = this.spending.decide(acquisitions, owned, took, this.clock.nowMicros());
		}
		catch (RuntimeException ex) {
			return CompletableFuture.failedFuture(ex);
		}
		return (local != null) ? CompletableFuture.completedFuture(local) : ask(acquisitions, owned, took, 0);
	}

	/**
	 * Asks the shared store for what the shares could not cover, unless a sync is refilling
	 * one of those shares: then waits for that refill and decides again (a share is never
	 * refilled by a sync and a request at once, so neither takes the units the other came
	 * for). The costs marked in {@code took} are taken from their shares.
	 */
	private CompletionStage<RateLimitResult> ask(List<Acquisition> acquisitions, Share[] owned, long[] took,
			int waits) {
		CompletableFuture<?> refill;
		List<ShareRequest> requests;
		long now;
		try {
			refill = ShareSpending.claim(owned, took, waits < MAX_REFILL_WAITS);
			if (refill != null) {
				ShareSpending.untake(acquisitions, owned, took);
				return refill.handle((ignored, failure) -> null).thenCompose((ignored) -> {
					long later = this.clock.nowMicros();
					RateLimitResult local = this.spending.decide(acquisitions, owned, took, later);
					return (local != null) ? CompletableFuture.completedFuture(local)
							: ask(acquisitions, owned, took, waits + 1);
				});
			}
			now = this.clock.nowMicros();
			requests = ShareSpending.requests(acquisitions, owned, took);
		}
		catch (RuntimeException ex) {
			ShareSpending.release(owned);
			ShareSpending.untake(acquisitions, owned, took);
			return CompletableFuture.failedFuture(ex);
		}
		CompletionStage<ShareGrant> granted;
		try {
			granted = this.sharing.grantAsync(requests);
		}
		catch (RuntimeException ex) {
			granted = CompletableFuture.failedFuture(ex);
		}
		return granted.whenComplete((result, failure) -> {
			if (failure != null) {
				ShareSpending.release(owned);
				ShareSpending.untake(acquisitions, owned, took);
			}
		}).thenApply((grant) -> this.spending.granted(acquisitions, owned, took, requests, grant, now));
	}

	/**
	 * Decides one acquisition like the list call; a bucket whose share covers it is decided
	 * without allocating.
	 */
	@Override
	public boolean tryAcquire(RateLimit limit, String identity, long cost, long maxDelayMicros,
			MutableDecision into) {
		if (maxDelayMicros == 0 && this.table.eligible(limit)) {
			Share share = this.table.find(limit, identity);
			if (share != null) {
				long now = this.clock.nowMicros();
				synchronized (share) {
					if (!share.removed && share.take(limit, cost, now)) {
						into.set(limit, true, share.remaining(), share.resetMicros(now), 0, 0)
							.inWindow(share.windowMicros)
							.decidedAt(now, RateLimitResult.LOCAL);
						return true;
					}
					if (!share.removed && share.blockedUntil > now) {
						// an empty share waiting for the next sync rejects here, as the list call does
						share.rejectHere(cost);
						into.set(limit, false, share.remaining(), share.resetMicros(now), share.retryAfterMicros(now), 0)
							.inWindow(share.windowMicros)
							.decidedAt(now, RateLimitResult.LOCAL);
						return false;
					}
				}
			}
		}
		return RateLimitStore.super.tryAcquire(limit, identity, cost, maxDelayMicros, into);
	}

	/**
	 * Gives back to this instance's share what was taken from it or, for a bucket without
	 * a share here (or a share whose window has ended), to the shared store.
	 */
	@Override
	public void refund(List<Acquisition> acquisitions, RateLimitResult decided) {
		List<Acquisition> elsewhere = refundLocally(acquisitions, decided);
		if (!elsewhere.isEmpty()) {
			this.shared.refund(elsewhere, decided);
		}
	}

	@Override
	public CompletionStage<Void> refundAsync(List<Acquisition> acquisitions, RateLimitResult decided) {
		List<Acquisition> elsewhere;
		try {
			elsewhere = refundLocally(acquisitions, decided);
		}
		catch (RuntimeException ex) {
			return CompletableFuture.failedFuture(ex);
		}
		return elsewhere.isEmpty() ? CompletableFuture.completedFuture(null)
				: this.shared.refundAsync(elsewhere, decided);
	}

	private List<Acquisition> refundLocally(List<Acquisition> acquisitions, RateLimitResult decided) {
		if (!this.table.allEligible(acquisitions)) {
			return acquisitions;
		}
		List<Acquisition> elsewhere = List.of();
		long now = this.clock.nowMicros();
		for (Acquisition acquisition : acquisitions) {
			Share share = this.table.find(acquisition.limit(), acquisition.identity());
			boolean kept = false;
			if (share != null) {
				long windowEnd = windowEnd(acquisition.limit(), decided);
				synchronized (share) {
					kept = share.giveBack(acquisition.cost(), now, windowEnd);
				}
			}
			if (!kept) {
				if (elsewhere.isEmpty()) {
					elsewhere = new ArrayList<>(acquisitions.size());
				}
				elsewhere.add(acquisition);
			}
		}
		return elsewhere;
	}

	/**
	 * Settles against this instance's shares where it can, as {@link #refund} gives back:
	 * a give-back goes to the bucket's share, a charge comes out of the share's units as
	 * far as they go; the rest (buckets without a share here, shares whose window has
	 * ended, the part of a charge beyond a share's units, and every bucket of a call with a
	 * limit that is not shared) is settled by the shared store, in one call. Either way the
	 * bucket ends up charged exactly the actual cost, since a share's units are already
	 * taken from it, and a share emptied by a charge admits nothing more here until the
	 * shared store, which holds the debt, grants it units again.
	 */
	@Override
	public void settle(List<Acquisition> reserved, RateLimitResult decided, long[] actualCosts) {
		RateLimitStore.requireSettleable(reserved, actualCosts);
		Settlement elsewhere = settleLocally(reserved, decided, actualCosts);
		if (!elsewhere.reserved.isEmpty()) {
			this.shared.settle(elsewhere.reserved, decided, elsewhere.actualCosts);
		}
	}

	@Override
	public CompletionStage<Void> settleAsync(List<Acquisition> reserved, RateLimitResult decided,
			long[] actualCosts) {
		Settlement elsewhere;
		try {
			RateLimitStore.requireSettleable(reserved, actualCosts);
			elsewhere = settleLocally(reserved, decided, actualCosts);
		}
		catch (RuntimeException ex) {
			return CompletableFuture.failedFuture(ex);
		}
		return elsewhere.reserved.isEmpty() ? CompletableFuture.completedFuture(null)
				: this.shared.settleAsync(elsewhere.reserved, decided, elsewhere.actualCosts);
	}

	/** Settles what the shares here can take; answers what is left for the shared store. */
	private Settlement settleLocally(List<Acquisition> reserved, RateLimitResult decided, long[] actualCosts) {
		if (!this.table.allEligible(reserved)) {
			return new Settlement(reserved, actualCosts.clone());
		}
		List<Acquisition> elsewhere = new ArrayList<>(0);
		long[] elsewhereCosts = new long[reserved.size()];
		long now = this.clock.nowMicros();
		for (int i = 0; i < reserved.size(); i++) {
			Acquisition acquisition = reserved.get(i);
			long delta = actualCosts[i] - acquisition.cost();
			if (delta == 0) {
				continue;
			}
			Share share = this.table.find(acquisition.limit(), acquisition.identity());
			// what is left to settle elsewhere, beyond the reservation
			long left = delta;
			if (share != null) {
				long windowEnd = windowEnd(acquisition.limit(), decided);
				synchronized (share) {
					if (delta < 0) {
						left = share.giveBack(-delta, now, windowEnd) ? 0 : delta;
					}
					else {
						left = delta - share.charge(delta, now);
					}
				}
			}
			if (left != 0) {
				elsewhereCosts[elsewhere.size()] = acquisition.cost() + left;
				elsewhere.add(acquisition);
			}
		}
		return new Settlement(elsewhere, Arrays.copyOf(elsewhereCosts, elsewhere.size()));
	}

	/** Acquisitions left to settle, with their actual costs. */
	private record Settlement(List<Acquisition> reserved, long[] actualCosts) {
	}

	/**
	 * The end of the window an admitted acquisition was counted in, as the share records
	 * the window of its grant: {@link Long#MAX_VALUE} for a bucket, {@link Long#MIN_VALUE}
	 * when the decision does not say.
	 */
	private static long windowEnd(RateLimit limit, RateLimitResult decided) {
		long resetMicros = 0;
		if (limit.isCalendar()) {
			resetMicros = -1;
			for (RateLimitDecision decision : decided.decisions()) {
				if (decision.limit().name().equals(limit.name())) {
					resetMicros = decision.resetMicros();
				}
			}
			if (resetMicros < 0) {
				return Long.MIN_VALUE;
			}
		}
		return AlgorithmSpec.of(limit.algorithm()).shareExpiresAtMicros(limit, decided.timestampMicros(), resetMicros);
	}

	@Override
	public String name() {
		return this.shared.name();
	}

	/** The shared store's status, with the shares held here among the local buckets. */
	@Override
	public StoreStatus status() {
		StoreStatus status = this.shared.status();
		List<StoreStatus.LocalBuckets> buckets = new ArrayList<>(status.buckets());
		buckets.add(new StoreStatus.LocalBuckets("local-first shares", this.table.size(), this.table.maximum()));
		return new StoreStatus(status.name(), status.deciding(), status.circuitBreaker(), buckets);
	}

	/** Reads the shared store's bucket: what this and every other instance have not taken. */
	@Override
	public BucketSnapshot inspect(RateLimit limit, String identity) {
		return this.shared.inspect(limit, identity);
	}

	/** Forgets this instance's share of the bucket and the shared store's state of it. */
	@Override
	public boolean reset(RateLimit limit, String identity) {
		this.table.remove(limit, identity);
		return this.shared.reset(limit, identity);
	}

	@Override
	public void resetAll() {
		this.table.removeAll((share) -> {
		});
		this.shared.resetAll();
	}

}
