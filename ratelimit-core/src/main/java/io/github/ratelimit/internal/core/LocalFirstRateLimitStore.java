package io.github.ratelimit.internal.core;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import java.util.function.Predicate;

import io.github.ratelimit.store.Acquisition;
import io.github.ratelimit.store.BucketSnapshot;
import io.github.ratelimit.store.MutableDecision;
import io.github.ratelimit.store.RateLimit;
import io.github.ratelimit.store.RateLimitDecision;
import io.github.ratelimit.store.RateLimitResult;
import io.github.ratelimit.store.RateLimitStore;
import io.github.ratelimit.store.StoreStatus;

/**
 * Decides on this instance, against shares of each bucket leased from a shared store, and
 * settles with that store in batches: Redis load grows with the number of active buckets
 * and the sync rate, not with requests.
 * <p>
 * A share is units of a bucket that the shared store has already counted as taken (a
 * {@link ShareStore lease}), so an instance spending its share never admits what the
 * bucket did not have: instances together never exceed a limit, whatever the sync
 * interval. What the interval trades is the other direction: units one instance holds are
 * not available to another until they are given back.
 * <ul>
 * <li>A request whose bucket has a share large enough is decided here, in memory.</li>
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
 * without this store. A share's units are counted in the window they were leased in: a
 * window limit's share lapses when that window ends.
 */
public final class LocalFirstRateLimitStore implements RateLimitStore, AutoCloseable {

	/** A share holds about this many sync intervals of its bucket's recent demand. */
	static final int INTERVALS_AHEAD = 2;

	private static final long CLOSE_TIMEOUT_MILLIS = 2_000;

	/** Refills a request waits for at most before it asks the shared store itself. */
	private static final int MAX_REFILL_WAITS = 2;

	private final RateLimitStore shared;

	private final ShareStore sharing;

	private final RateLimitClock clock;

	private final long intervalMicros;

	private final Predicate<RateLimit> exact;

	private final int maxShares;

	private final ThrottledLog failureLog;

	private final Consumer<String> warn;

	private final Map<String, Map<String, Share>> shares = new ConcurrentHashMap<>();

	private final AtomicInteger shareCount = new AtomicInteger();

	private volatile ScheduledExecutorService scheduler;

	/**
	 * Creates a store deciding against shares of {@code shared}'s buckets.
	 * @param shared the shared store, deciding what is not decided here
	 * @param sharing the shared store's lease call
	 * @param clock this instance's clock
	 * @param syncInterval time between two syncs
	 * @param exact limits decided by the shared store on every request
	 * @param maxShares most buckets with a share on this instance; further buckets are
	 * decided by the shared store
	 * @param failureLog throttles messages about failed syncs
	 * @param warn where those messages go
	 */
	public LocalFirstRateLimitStore(RateLimitStore shared, ShareStore sharing, RateLimitClock clock,
			Duration syncInterval, Predicate<RateLimit> exact, int maxShares, ThrottledLog failureLog,
			Consumer<String> warn) {
		if (syncInterval.isNegative() || syncInterval.isZero()) {
			throw new IllegalArgumentException("syncInterval must be positive: " + syncInterval);
		}
		if (maxShares < 0) {
			throw new IllegalArgumentException("maxShares must not be negative: " + maxShares);
		}
		this.shared = shared;
		this.sharing = sharing;
		this.clock = clock;
		this.intervalMicros = Math.max(1, TimeUnit.NANOSECONDS.toMicros(syncInterval.toNanos()));
		this.exact = exact;
		this.maxShares = maxShares;
		this.failureLog = failureLog;
		this.warn = warn;
	}

	/**
	 * Starts syncing every interval on a daemon thread of its own, until {@link #close()}.
	 * Each sync waits for the replies of the one before.
	 */
	public synchronized void start() {
		if (this.scheduler != null) {
			return;
		}
		this.scheduler = Executors.newSingleThreadScheduledExecutor((task) -> {
			Thread thread = new Thread(task, "ratelimit-share-sync");
			thread.setDaemon(true);
			return thread;
		});
		this.scheduler.scheduleWithFixedDelay(this::syncAndWait, this.intervalMicros, this.intervalMicros,
				TimeUnit.MICROSECONDS);
	}

	private void syncAndWait() {
		try {
			sync().get(Math.max(CLOSE_TIMEOUT_MILLIS, 20 * this.intervalMicros / 1000), TimeUnit.MILLISECONDS);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
		catch (TimeoutException | RuntimeException | ExecutionException ex) {
			this.failureLog.log("Rate limit share sync failed: " + ex, this.warn);
		}
	}

	/**
	 * Stops syncing and gives every share back to the shared store, waiting a short time
	 * for it to answer: units this instance held are not lost to the others when it stops.
	 */
	@Override
	public void close() {
		ScheduledExecutorService running;
		synchronized (this) {
			running = this.scheduler;
			this.scheduler = null;
		}
		if (running != null) {
			running.shutdownNow();
		}
		List<CompletableFuture<?>> calls = new ArrayList<>();
		for (Map<String, Share> byIdentity : this.shares.values()) {
			for (Share share : byIdentity.values()) {
				long units;
				long grantedAt;
				synchronized (share) {
					units = share.takeAll(this.clock.nowMicros());
					grantedAt = share.grantedAt;
					share.removed = true;
				}
				giveBack(share, units, grantedAt, calls);
			}
		}
		this.shares.clear();
		this.shareCount.set(0);
		try {
			CompletableFuture.allOf(calls.toArray(CompletableFuture[]::new))
				.get(CLOSE_TIMEOUT_MILLIS, TimeUnit.MILLISECONDS);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
		catch (Exception ex) {
			this.failureLog.log("Rate limit shares were not all given back: " + ex, this.warn);
		}
	}

	@Override
	public RateLimitResult tryAcquire(List<Acquisition> acquisitions, long maxDelayMicros) {
		Share[] owned = shares(acquisitions, maxDelayMicros);
		if (owned == null) {
			return this.shared.tryAcquire(acquisitions, maxDelayMicros);
		}
		long[] took = new long[owned.length];
		RateLimitResult local = decideLocally(acquisitions, owned, took, this.clock.nowMicros());
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
			owned = shares(acquisitions, maxDelayMicros);
			if (owned == null) {
				return this.shared.tryAcquireAsync(acquisitions, maxDelayMicros);
			}
			took = new long[owned.length];
			local = decideLocally(acquisitions, owned, took, this.clock.nowMicros());
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
		List<ShareRequest> leases;
		long now;
		try {
			refill = claim(owned, took, waits < MAX_REFILL_WAITS);
			if (refill != null) {
				untake(acquisitions, owned, took);
				return refill.handle((ignored, failure) -> null).thenCompose((ignored) -> {
					long later = this.clock.nowMicros();
					RateLimitResult local = decideLocally(acquisitions, owned, took, later);
					return (local != null) ? CompletableFuture.completedFuture(local)
							: ask(acquisitions, owned, took, waits + 1);
				});
			}
			now = this.clock.nowMicros();
			leases = leases(acquisitions, owned, took);
		}
		catch (RuntimeException ex) {
			release(owned);
			untake(acquisitions, owned, took);
			return CompletableFuture.failedFuture(ex);
		}
		CompletionStage<ShareGrant> leased;
		try {
			leased = this.sharing.grantAsync(leases);
		}
		catch (RuntimeException ex) {
			leased = CompletableFuture.failedFuture(ex);
		}
		return leased.whenComplete((result, failure) -> {
			if (failure != null) {
				release(owned);
				untake(acquisitions, owned, took);
			}
		}).thenApply((result) -> granted(acquisitions, owned, took, leases, result, now));
	}

	/**
	 * Marks the shares as asked by this request, so that no sync refills them meanwhile;
	 * or, when a sync already refills one the request needs, marks nothing and returns
	 * that refill to wait for.
	 */
	private static CompletableFuture<?> claim(Share[] owned, long[] took, boolean waitForRefill) {
		for (int i = 0; i < owned.length; i++) {
			synchronized (owned[i]) {
				if (waitForRefill && took[i] == 0 && owned[i].refreshing) {
					CompletableFuture<?> refill = owned[i].refill;
					for (int j = 0; j < i; j++) {
						synchronized (owned[j]) {
							owned[j].asking--;
						}
					}
					return refill;
				}
				owned[i].asking++;
			}
		}
		return null;
	}

	private static void release(Share[] owned) {
		for (Share share : owned) {
			synchronized (share) {
				share.asking--;
			}
		}
	}

	/**
	 * Decides one acquisition like the list call; a bucket whose share covers it is decided
	 * without allocating.
	 */
	@Override
	public boolean tryAcquire(RateLimit limit, String identity, long cost, long maxDelayMicros,
			MutableDecision into) {
		if (maxDelayMicros == 0 && eligible(limit)) {
			Map<String, Share> byIdentity = this.shares.get(limit.name());
			Share share = (byIdentity != null) ? byIdentity.get(identity) : null;
			if (share != null) {
				long now = this.clock.nowMicros();
				synchronized (share) {
					if (!share.removed && share.take(limit, cost, now)) {
						into.set(limit, true, share.remaining(), share.resetMicros(now), 0, 0)
							.inWindow(share.windowMicros)
							.decidedAt(now, this.shared.name());
						return true;
					}
					if (!share.removed && share.blockedUntil > now) {
						// an empty share waiting for the next sync rejects here, as the list call does
						share.rejectHere(cost);
						into.set(limit, false, share.remaining(), share.resetMicros(now), share.retryAfterMicros(now), 0)
							.inWindow(share.windowMicros)
							.decidedAt(now, this.shared.name());
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
		if (!allEligible(acquisitions)) {
			return acquisitions;
		}
		List<Acquisition> elsewhere = List.of();
		long now = this.clock.nowMicros();
		for (Acquisition acquisition : acquisitions) {
			Share share = existing(acquisition.limit(), acquisition.identity());
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
	 * The end of the window an admitted acquisition was counted in, as the share records
	 * the window of its lease: {@link Long#MAX_VALUE} for a bucket, {@link Long#MIN_VALUE}
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
		buckets.add(new StoreStatus.LocalBuckets("local-first shares", this.shareCount.get(), this.maxShares));
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
		Map<String, Share> byIdentity = this.shares.get(limit.name());
		Share share = (byIdentity != null) ? byIdentity.remove(identity) : null;
		if (share != null) {
			synchronized (share) {
				share.removed = true;
			}
			this.shareCount.decrementAndGet();
		}
		return this.shared.reset(limit, identity);
	}

	@Override
	public void resetAll() {
		for (Map<String, Share> byIdentity : this.shares.values()) {
			for (Share share : byIdentity.values()) {
				synchronized (share) {
					share.removed = true;
				}
			}
		}
		this.shares.clear();
		this.shareCount.set(0);
		this.shared.resetAll();
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
		long now = this.clock.nowMicros();
		List<CompletableFuture<?>> calls = new ArrayList<>();
		for (Map<String, Share> byIdentity : this.shares.values()) {
			for (Share share : byIdentity.values()) {
				boolean forget;
				// the calls are issued (not awaited) under the share's lock: a request that
				// then asks the shared store for this bucket is sent after them, on the same
				// connection, and so finds what they gave back
				synchronized (share) {
					if (share.removed) {
						continue;
					}
					share.settle(now);
					forget = share.idleSyncs >= 2 && share.lease == 0 && !share.refreshing;
					if (forget) {
						share.removed = true;
					}
					giveBack(share, share.giveBack, share.grantedAt, calls);
					if (share.want > 0) {
						calls.add(refresh(share, share.want, now));
					}
				}
				if (forget && byIdentity.remove(share.identity, share)) {
					this.shareCount.decrementAndGet();
				}
			}
		}
		return CompletableFuture.allOf(calls.toArray(CompletableFuture[]::new));
	}

	private CompletableFuture<?> refresh(Share share, long want, long now) {
		CompletionStage<ShareGrant> call;
		try {
			call = this.sharing.grantAsync(List.of(new ShareRequest(share.limit, share.identity, 0, want)));
		}
		catch (RuntimeException ex) {
			call = CompletableFuture.failedFuture(ex);
		}
		return call.handle((leased, failure) -> {
			CompletableFuture<Void> refilled;
			synchronized (share) {
				share.refreshing = false;
				refilled = share.refill;
				if (failure == null) {
					share.granted(leased.result().decisions().get(0), leased.extra()[0], want,
							leased.result().timestampMicros(), now, this.intervalMicros);
					if (share.removed) {
						// closed or reset meanwhile: nobody here will spend what came
						giveBack(share, share.takeAll(now), share.grantedAt, new ArrayList<>());
					}
				}
			}
			if (failure != null) {
				this.failureLog.log("Rate limit share sync failed: " + failure, this.warn);
			}
			if (refilled != null) {
				refilled.complete(null);
			}
			return null;
		}).toCompletableFuture();
	}

	private void giveBack(Share share, long units, long grantedAt, List<CompletableFuture<?>> calls) {
		if (units <= 0) {
			return;
		}
		RateLimitResult leasedAt = new RateLimitResult(List.of(), grantedAt, this.shared.name());
		RateLimit limit = share.limit;
		CompletionStage<Void> call;
		try {
			call = this.shared.refundAsync(
					List.of(new Acquisition(limit, share.identity, Math.min(units, limit.capacity()))), leasedAt);
		}
		catch (RuntimeException ex) {
			call = CompletableFuture.failedFuture(ex);
		}
		calls.add(call.exceptionally((failure) -> {
			// the units stay taken until the bucket refills or its window ends
			this.failureLog.log("Rate limit share could not be given back: " + failure, this.warn);
			return null;
		}).toCompletableFuture());
	}

	/** The shares of the acquisitions, created where missing; null when any is decided exactly. */
	private Share[] shares(List<Acquisition> acquisitions, long maxDelayMicros) {
		if (maxDelayMicros != 0 || acquisitions.isEmpty() || !allEligible(acquisitions)) {
			return null;
		}
		RateLimitStore.requireDistinct(acquisitions);
		Share[] owned = new Share[acquisitions.size()];
		for (int i = 0; i < owned.length; i++) {
			Acquisition acquisition = acquisitions.get(i);
			Map<String, Share> byIdentity = this.shares.get(acquisition.limit().name());
			if (byIdentity == null) {
				byIdentity = this.shares.computeIfAbsent(acquisition.limit().name(), (name) -> new ConcurrentHashMap<>());
			}
			Share share = byIdentity.get(acquisition.identity());
			if (share == null) {
				if (this.shareCount.get() >= this.maxShares) {
					return null;
				}
				Share created = new Share(acquisition.limit(), acquisition.identity());
				share = byIdentity.putIfAbsent(acquisition.identity(), created);
				if (share == null) {
					this.shareCount.incrementAndGet();
					share = created;
				}
			}
			owned[i] = share;
		}
		return owned;
	}

	private Share existing(RateLimit limit, String identity) {
		Map<String, Share> byIdentity = this.shares.get(limit.name());
		return (byIdentity != null) ? byIdentity.get(identity) : null;
	}

	private boolean allEligible(List<Acquisition> acquisitions) {
		for (Acquisition acquisition : acquisitions) {
			if (!eligible(acquisition.limit())) {
				return false;
			}
		}
		return true;
	}

	private boolean eligible(RateLimit limit) {
		return !limit.shadow() && AlgorithmSpec.of(limit.algorithm()).shareable() && !this.exact.test(limit);
	}

	/**
	 * Decides from the shares alone: admitted when every share covers its cost, rejected
	 * when one that does not is waiting for the next sync. Otherwise returns null, leaving
	 * taken (and marked in {@code took}) the costs of the shares that cover theirs: the
	 * shared store is asked only for the others.
	 */
	private RateLimitResult decideLocally(List<Acquisition> acquisitions, Share[] owned, long[] took, long now) {
		boolean all = true;
		boolean waiting = false;
		// which shares rejected, as seen when they were tried: a sync may unblock them since
		boolean[] blocked = null;
		for (int i = 0; i < owned.length; i++) {
			Acquisition acquisition = acquisitions.get(i);
			synchronized (owned[i]) {
				Share share = owned[i];
				took[i] = (!share.removed && share.take(acquisition.limit(), acquisition.cost(), now))
						? share.leases + 1 : 0;
				if (took[i] == 0) {
					all = false;
					if (share.blockedUntil > now) {
						waiting = true;
						blocked = (blocked != null) ? blocked : new boolean[owned.length];
						blocked[i] = true;
					}
				}
			}
		}
		if (all) {
			List<RateLimitDecision> decisions = new ArrayList<>(owned.length);
			for (int i = 0; i < owned.length; i++) {
				synchronized (owned[i]) {
					decisions.add(new RateLimitDecision(acquisitions.get(i).limit(), true, owned[i].remaining(),
							owned[i].resetMicros(now), 0, 0, owned[i].windowMicros));
				}
			}
			return new RateLimitResult(decisions, now, this.shared.name());
		}
		if (!waiting) {
			return null;
		}
		untake(acquisitions, owned, took);
		// an empty share waiting for the next sync rejects here, the others report what they hold
		List<RateLimitDecision> decisions = new ArrayList<>(owned.length);
		for (int i = 0; i < owned.length; i++) {
			Acquisition acquisition = acquisitions.get(i);
			synchronized (owned[i]) {
				Share share = owned[i];
				if (blocked[i]) {
					share.rejectHere(acquisition.cost());
					decisions.add(new RateLimitDecision(acquisition.limit(), false, share.remaining(),
							share.resetMicros(now), share.retryAfterMicros(now), 0, share.windowMicros));
				}
				else {
					decisions.add(new RateLimitDecision(acquisition.limit(), true, share.remaining(),
							share.resetMicros(now), 0, 0, share.windowMicros));
				}
			}
		}
		return new RateLimitResult(decisions, now, this.shared.name());
	}

	private static void untake(List<Acquisition> acquisitions, Share[] owned, long[] took) {
		for (int i = 0; i < owned.length; i++) {
			if (took[i] != 0) {
				synchronized (owned[i]) {
					owned[i].untake(acquisitions.get(i).cost(), took[i] - 1);
				}
				took[i] = 0;
			}
		}
	}

	/** What to ask the shared store: the costs the shares did not cover, and more units for each. */
	private List<ShareRequest> leases(List<Acquisition> acquisitions, Share[] owned, long[] took) {
		List<ShareRequest> leases = new ArrayList<>(owned.length);
		for (int i = 0; i < owned.length; i++) {
			Acquisition acquisition = acquisitions.get(i);
			long cost = (took[i] != 0) ? 0 : acquisition.cost();
			long extra;
			synchronized (owned[i]) {
				extra = owned[i].extraWanted(acquisition.limit(), acquisition.cost());
			}
			leases.add(new ShareRequest(acquisition.limit(), acquisition.identity(), cost, extra));
		}
		return leases;
	}

	/**
	 * Records what the shared store decided and granted into the shares: when it rejects,
	 * the costs taken from shares go back into them.
	 */
	private RateLimitResult granted(List<Acquisition> acquisitions, Share[] owned, long[] took,
			List<ShareRequest> leases, ShareGrant leased, long now) {
		release(owned);
		RateLimitResult result = leased.result();
		boolean allowed = result.allowed();
		if (!allowed) {
			untake(acquisitions, owned, took);
		}
		List<RateLimitDecision> answered = new ArrayList<>(owned.length);
		for (int i = 0; i < owned.length; i++) {
			RateLimitDecision decision = result.decisions().get(i);
			long cost = acquisitions.get(i).cost();
			synchronized (owned[i]) {
				Share share = owned[i];
				if (allowed) {
					if (took[i] == 0) {
						share.used += cost;
						share.requests++;
					}
					share.granted(decision, leased.extra()[i], leases.get(i).extra(), result.timestampMicros(), now,
							this.intervalMicros);
					if (share.removed && share.lease > 0) {
						// forgotten by a sync meanwhile: nobody here will spend what came
						giveBack(share, share.takeAll(now), result.timestampMicros(), new ArrayList<>());
					}
					// what this instance now holds is still there for its client
					answered.add(new RateLimitDecision(decision.limit(), true, share.remaining(),
							decision.resetMicros(), 0, decision.delayMicros(), decision.windowMicros()));
				}
				else {
					if (decision.rejects()) {
						share.rejectHere(cost);
						share.rejectedBy(decision, now, this.intervalMicros);
					}
					answered.add(decision);
				}
			}
		}
		return new RateLimitResult(answered, result.timestampMicros(), result.store());
	}

	/**
	 * This instance's share of one bucket. Guarded by its own monitor.
	 */
	static final class Share {

		final String identity;

		/** The limit as last asked for (a plan may have changed its capacity). */
		volatile RateLimit limit;

		/** Units taken from the shared bucket and not yet spent here. */
		long lease;

		/**
		 * Counts the leases of ended windows: a cost taken from a lease of an earlier
		 * window is not returned into this one.
		 */
		long leases;

		/** Local time at which the lease lapses: when the window it was counted in ends. */
		long leaseExpiresAt = Long.MAX_VALUE;

		/** The shared store's time at which the window of the lease ends; MAX_VALUE for a bucket. */
		long windowEnd = Long.MAX_VALUE;

		/** The shared store's time of the last grant: the window units are given back to. */
		long grantedAt;

		/** Units spent here, and units asked for but rejected here, since the last sync. */
		long used;

		long rejected;

		/** Units asked for in the interval before the last sync. */
		long lastDemand;

		/** Requests since the last sync, and in the interval before it. */
		int requests;

		int lastRequests;

		/** What the shared bucket had left after the last grant, for other instances too. */
		long sharedRemaining;

		long resetAt;

		long windowMicros;

		/** Until when an empty share rejects here rather than ask the shared store. */
		long blockedUntil;

		/** When the shared store said more units come. */
		long retryAt;

		int idleSyncs;

		boolean refreshing;

		/** Completes when the sync's refill of this share has been recorded. */
		CompletableFuture<Void> refill;

		/** Requests asking the shared store for this bucket now. */
		int asking;

		boolean removed;

		/** What the last {@link #settle} decided: units to give back, and to ask for. */
		long giveBack;

		long want;

		@Override
		public synchronized String toString() {
			return "Share[" + this.identity + " lease=" + this.lease + " used=" + this.used + " rejected=" + this.rejected
					+ " blockedUntil=" + this.blockedUntil + " retryAt=" + this.retryAt + " refreshing=" + this.refreshing
					+ " asking=" + this.asking + " removed=" + this.removed + " idle=" + this.idleSyncs + "]";
		}

		Share(RateLimit limit, String identity) {
			this.limit = limit;
			this.identity = identity;
			this.windowMicros = limit.quotaWindowMicros();
			this.sharedRemaining = limit.capacity();
		}

		boolean take(RateLimit asked, long cost, long now) {
			this.limit = asked;
			if (this.leaseExpiresAt <= now && this.lease != 0) {
				this.lease = 0;
				this.leases++;
			}
			if (this.lease < cost) {
				return false;
			}
			this.lease -= cost;
			this.used += cost;
			this.requests++;
			return true;
		}

		/** Returns a cost taken from the lease numbered {@code leases}, unless that lease has lapsed. */
		void untake(long cost, long leases) {
			if (leases == this.leases) {
				this.lease += cost;
			}
			this.used -= cost;
			this.requests--;
		}

		/**
		 * Takes back a refunded acquisition, unless its window has ended, the share is gone,
		 * or the share holds units of another window than the one ({@code windowEnd}) the
		 * acquisition was counted in: there the unit would be one that window never counted.
		 */
		boolean giveBack(long cost, long now, long windowEnd) {
			if (this.removed || this.leaseExpiresAt <= now || windowEnd != this.windowEnd) {
				return false;
			}
			this.lease = Math.min(this.limit.capacity(), this.lease + cost);
			return true;
		}

		long takeAll(long now) {
			long units = (this.leaseExpiresAt > now) ? this.lease : 0;
			this.lease = 0;
			return units;
		}

		/** Units to ask for beyond a request's cost when the share cannot cover it. */
		long extraWanted(RateLimit asked, long cost) {
			if (Math.max(this.lastRequests, this.requests + 1) <= 1) {
				// a cold bucket, one request an interval at most: take no more than its cost,
				// which would only be given back at the next sync
				return 0;
			}
			long demand = Math.max(this.lastDemand, this.used + this.rejected + cost);
			long target = Math.min(asked.capacity(), INTERVALS_AHEAD * demand);
			return Math.max(0, target - cost - Math.max(0, this.lease));
		}

		long remaining() {
			return Math.min(this.limit.capacity(), this.lease + this.sharedRemaining);
		}

		long resetMicros(long now) {
			return Math.max(0, this.resetAt - now);
		}

		/** Time until the share may admit again: the shared store's retry-after, or the next sync. */
		long retryAfterMicros(long now) {
			return Math.max(1, Math.max(this.retryAt, this.blockedUntil) - now);
		}

		/** Counts a request turned away, as demand the next sync asks for. */
		void rejectHere(long cost) {
			this.rejected += cost;
			this.requests++;
		}

		/** Decides what this sync gives back or asks for, and starts counting anew. */
		void settle(long now) {
			this.giveBack = 0;
			this.want = 0;
			// this is the sync an empty share waited for: from now on it may ask again
			this.blockedUntil = 0;
			if (this.leaseExpiresAt <= now) {
				// the expiry stays: a refund of the lapsed window must not make a lease of it
				this.lease = 0;
				this.leases++;
			}
			if (this.refreshing || this.asking > 0) {
				// a request is asking the shared store for this bucket: settle at the next sync
				return;
			}
			long demand = this.used + this.rejected;
			int asked = this.requests;
			this.lastDemand = demand;
			this.lastRequests = asked;
			this.used = 0;
			this.rejected = 0;
			this.requests = 0;
			if (asked <= 1) {
				// idle or cold: a share would cost a call per sync for at most one request
				this.idleSyncs = (demand == 0) ? this.idleSyncs + 1 : 0;
				this.giveBack = this.lease;
			}
			else {
				this.idleSyncs = 0;
				long target = Math.min(this.limit.capacity(), INTERVALS_AHEAD * demand);
				this.giveBack = Math.max(0, this.lease - target);
				if (this.lease < target) {
					this.want = target - this.lease;
					this.refreshing = true;
					this.refill = new CompletableFuture<>();
				}
			}
			this.lease -= this.giveBack;
			// what goes back is there for every instance again
			this.sharedRemaining = Math.min(this.limit.capacity(), this.sharedRemaining + this.giveBack);
		}


		/**
		 * Adds what the shared store granted: {@code extra} units leased at {@code
		 * storeTime}, of {@code wanted} asked for (0: whatever it could).
		 */
		void granted(RateLimitDecision decision, long extra, long wanted, long storeTime, long now,
				long intervalMicros) {
			long expires = AlgorithmSpec.of(this.limit.algorithm())
				.shareExpiresAtMicros(this.limit, storeTime, decision.resetMicros());
			if (expires != this.windowEnd) {
				// another window: what was left of the last one no longer counts there
				this.lease = 0;
				this.leases++;
				this.windowEnd = expires;
			}
			this.leaseExpiresAt = (expires == Long.MAX_VALUE) ? Long.MAX_VALUE : now + Math.max(0, expires - storeTime);
			this.lease = Math.min(this.limit.capacity(), this.lease + extra);
			this.grantedAt = storeTime;
			this.sharedRemaining = decision.remaining();
			this.resetAt = now + decision.resetMicros();
			this.windowMicros = decision.windowMicros();
			if (wanted > 0 && extra < wanted) {
				// the bucket is short: spend what came, then wait for the next sync (or for
				// the window to end, when a window's units run out)
				this.blockedUntil = Math.min(now + intervalMicros, this.leaseExpiresAt);
				this.retryAt = now + Math.max(decision.resetMicros(), intervalMicros);
			}
			else {
				this.blockedUntil = 0;
			}
		}

		/**
		 * The shared store rejected: ask it again at the next sync at the earliest, which
		 * collects what refilled meanwhile; a window's share, when its window ends if that
		 * comes first.
		 */
		void rejectedBy(RateLimitDecision decision, long now, long intervalMicros) {
			this.sharedRemaining = decision.remaining();
			this.resetAt = now + decision.resetMicros();
			this.windowMicros = decision.windowMicros();
			this.retryAt = now + decision.retryAfterMicros();
			boolean windows = AlgorithmSpec.of(this.limit.algorithm()).windowsAligned();
			this.blockedUntil = now
					+ (windows ? Math.min(decision.retryAfterMicros(), intervalMicros) : intervalMicros);
		}

	}

}
