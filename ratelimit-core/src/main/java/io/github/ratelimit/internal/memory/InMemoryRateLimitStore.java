package io.github.ratelimit.internal.memory;

import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Objects;
import java.util.function.LongSupplier;

import io.github.ratelimit.internal.core.BucketState;
import io.github.ratelimit.internal.core.RateLimitClock;
import io.github.ratelimit.store.Acquisition;
import io.github.ratelimit.store.BucketSnapshot;
import io.github.ratelimit.store.MutableDecision;
import io.github.ratelimit.store.RateLimit;
import io.github.ratelimit.store.RateLimitDecision;
import io.github.ratelimit.store.RateLimitResult;
import io.github.ratelimit.store.RateLimitStore;
import io.github.ratelimit.store.StoreStatus;

/**
 * Buckets in a bounded hash table of its own, which values what it keeps.
 * <p>
 * Each bucket is locked on its own (no global lock, no thread at all); finding it takes no
 * lock and writes nothing, and a request with several limits locks their buckets in key
 * order, so the decision is atomic and all-or-nothing without deadlocks. A bucket without
 * state is a bucket with its whole quota, so a request decides a missing bucket against a
 * fresh state and the store keeps it only when the request is charged: a request rejected
 * by any of its limits leaves no new bucket behind.
 * <p>
 * A bucket whose quota is whole again is the same as no bucket, so nothing expires on a
 * timer: such buckets are dropped when the store ranks its buckets, when it counts them,
 * and a few at a time whenever a bucket is added. When the store holds more than its bound,
 * it ranks every bucket by how close it is to a fresh one (how much of its quota is in
 * use, in quarters, then how soon more quota comes) and forgets the closest first, an
 * eighth of the bound at a time, so that it ranks once per that many new buckets: a
 * used-up bucket is forgotten only when every bucket kept is used up. Ranking reads what
 * each bucket's latest decision left, two bytes kept beside its state, so that it costs
 * one read per bucket and nothing on the path of a request.
 * <p>
 * A bucket never decides at a time earlier than one it has already decided at, so a
 * request that read the clock before another one for the same bucket but reaches the
 * bucket after it cannot move its window backwards.
 */
public final class InMemoryRateLimitStore implements RateLimitStore {

	/** Default bound on the number of buckets kept. */
	public static final long DEFAULT_MAXIMUM_KEYS = 100_000;

	/** Marks a decision that found a bucket removed meanwhile and must look again. */
	private static final long RETRY = Long.MIN_VALUE;

	private final BucketTable buckets;

	private final RateLimitClock clock;

	private final long maximumKeys;

	private final BucketEviction eviction;

	private final BucketSettlement settlement;

	/**
	 * Creates a store with the system clock and the default bound.
	 */
	public InMemoryRateLimitStore() {
		this(RateLimitClock.system(), DEFAULT_MAXIMUM_KEYS);
	}

	/**
	 * Creates a store.
	 * @param clock the clock deciding at
	 * @param maximumKeys the largest number of buckets kept
	 */
	public InMemoryRateLimitStore(RateLimitClock clock, long maximumKeys) {
		if (maximumKeys <= 0) {
			throw new IllegalArgumentException("maximumKeys must be positive: " + maximumKeys);
		}
		this.maximumKeys = maximumKeys;
		this.clock = clock;
		int processors = Runtime.getRuntime().availableProcessors();
		this.buckets = new BucketTable(Math.max(2, Integer.highestOneBit(Math.min(64, 4 * processors))));
		this.eviction = new BucketEviction(this.buckets, clock, maximumKeys);
		this.settlement = new BucketSettlement(this.buckets, this.eviction, clock);
	}

	@Override
	public boolean tryAcquire(RateLimit limit, String identity, long cost, long maxDelayMicros,
			MutableDecision into) {
		requireValid(limit, identity, cost);
		long now = this.clock.nowMicros();
		String name = limit.name();
		int hash = this.buckets.hash(name, identity);
		for (;;) {
			Bucket bucket = this.buckets.get(hash, name, identity);
			boolean created = (bucket == null);
			if (created) {
				// decided as a fresh bucket, and kept only if the request is charged
				bucket = new Bucket(hash, limit, identity);
			}
			synchronized (bucket) {
				if (bucket.removed) {
					continue;
				}
				long at = bucket.advanceTo(now);
				bucket.stateFor(limit).acquire(limit, at, cost, maxDelayMicros, into);
				// a created bucket is kept only when charged; if another request added one
				// first, this one (still private) is dropped and the request decided there
				if (created && into.allowed() && this.buckets.putIfAbsent(bucket) != null) {
					continue;
				}
				bucket.remember(at, into.remaining(), limit.capacity(), into.resetMicros());
				into.decidedAt(at, RateLimitResult.MEMORY);
			}
			if (created && into.allowed()) {
				this.eviction.added(bucket, now);
			}
			return !into.rejects();
		}
	}

	@Override
	public RateLimitResult tryAcquire(List<Acquisition> acquisitions, long maxDelayMicros) {
		if (acquisitions.size() == 1) {
			return tryAcquire(acquisitions.get(0), maxDelayMicros);
		}
		RateLimitStore.requireDistinct(acquisitions);
		long now = this.clock.nowMicros();
		int count = acquisitions.size();
		int[] hashes = new int[count];
		Integer[] order = new Integer[count];
		for (int i = 0; i < count; i++) {
			Acquisition acquisition = acquisitions.get(i);
			hashes[i] = this.buckets.hash(acquisition.limit().name(), acquisition.identity());
			order[i] = i;
		}
		Arrays.sort(order, Comparator.comparing((Integer i) -> acquisitions.get(i).limit().name())
			.thenComparing((Integer i) -> acquisitions.get(i).identity()));
		for (;;) {
			Bucket[] locked = new Bucket[count];
			boolean[] created = new boolean[count];
			for (int i = 0; i < count; i++) {
				Acquisition acquisition = acquisitions.get(i);
				locked[i] = this.buckets.get(hashes[i], acquisition.limit().name(), acquisition.identity());
				if (locked[i] == null) {
					// decided as a fresh bucket, added only if the request is charged
					locked[i] = new Bucket(hashes[i], acquisition.limit(), acquisition.identity());
					created[i] = true;
				}
			}
			RateLimitDecision[] decisions = new RateLimitDecision[count];
			long at = lockInOrder(locked, order, 0,
					() -> decideAll(acquisitions, locked, created, decisions, now, maxDelayMicros));
			if (at != RETRY) {
				for (int i = 0; i < count; i++) {
					if (created[i] && !locked[i].removed) {
						this.eviction.added(locked[i], now);
						break;
					}
				}
				return new RateLimitResult(Arrays.asList(decisions), at);
			}
		}
	}

	/** The single acquisition of a list: as the in-place path, answering with a result. */
	private RateLimitResult tryAcquire(Acquisition acquisition, long maxDelayMicros) {
		RateLimit limit = acquisition.limit();
		String identity = acquisition.identity();
		long cost = acquisition.cost();
		long now = this.clock.nowMicros();
		int hash = this.buckets.hash(limit.name(), identity);
		for (;;) {
			Bucket bucket = this.buckets.get(hash, limit.name(), identity);
			boolean created = (bucket == null);
			if (created) {
				bucket = new Bucket(hash, limit, identity);
			}
			RateLimitResult result;
			synchronized (bucket) {
				if (bucket.removed) {
					continue;
				}
				long at = bucket.advanceTo(now);
				BucketState state = bucket.stateFor(limit);
				RateLimitDecision decision = state.check(limit, at, cost, maxDelayMicros);
				if (decision.allowed()) {
					if (created && this.buckets.putIfAbsent(bucket) != null) {
						continue;
					}
					state.commit(limit, at, cost);
				}
				bucket.remember(at, decision.remaining(), limit.capacity(), decision.resetMicros());
				result = new RateLimitResult(List.of(decision), at);
			}
			if (created && result.allowed()) {
				this.eviction.added(bucket, now);
			}
			return result;
		}
	}

	private static void requireValid(RateLimit limit, String identity, long cost) {
		Objects.requireNonNull(identity, "identity must not be null");
		if (cost <= 0 || cost > limit.capacity()) {
			// refused as the acquisition it stands for would be
			new Acquisition(limit, identity, cost);
		}
	}

	@Override
	public void refund(List<Acquisition> acquisitions, RateLimitResult decided) {
		long timestampMicros = decided.timestampMicros();
		long now = this.clock.nowMicros();
		MutableDecision probe = new MutableDecision();
		for (Acquisition acquisition : acquisitions) {
			RateLimit limit = acquisition.limit();
			Bucket bucket = this.buckets.get(this.buckets.hash(limit.name(), acquisition.identity()), limit.name(),
					acquisition.identity());
			if (bucket != null) {
				synchronized (bucket) {
					if (!bucket.removed) {
						bucket.stateFor(limit).refund(limit, timestampMicros, acquisition.cost());
						// what the bucket remembers of its quota must not overstate it
						BucketEviction.rankOfState(bucket, now, probe);
					}
				}
			}
		}
	}

	/**
	 * Settles every bucket while holding all their monitors, as a decision does: see
	 * {@link RateLimitStore#settle}.
	 */
	@Override
	public void settle(List<Acquisition> reserved, RateLimitResult decided, long[] actualCosts) {
		RateLimitStore.requireSettleable(reserved, actualCosts);
		this.settlement.settle(reserved, decided, actualCosts);
	}

	@Override
	public BucketSnapshot inspect(RateLimit limit, String identity) {
		long now = this.clock.nowMicros();
		Bucket bucket = this.buckets.get(this.buckets.hash(limit.name(), identity), limit.name(), identity);
		if (bucket != null) {
			synchronized (bucket) {
				if (!bucket.removed && bucket.state.algorithm() == limit.algorithm()) {
					long at = Math.max(now, bucket.lastMicros);
					return BucketSnapshot.of(bucket.state.check(limit, at, 1), identity, true, RateLimitResult.MEMORY);
				}
			}
		}
		return BucketSnapshot.of(BucketState.create(limit).check(limit, now, 1), identity, false,
				RateLimitResult.MEMORY);
	}

	@Override
	public boolean reset(RateLimit limit, String identity) {
		Bucket bucket = this.buckets.get(this.buckets.hash(limit.name(), identity), limit.name(), identity);
		if (bucket != null) {
			synchronized (bucket) {
				if (!bucket.removed) {
					this.eviction.remove(bucket);
					return true;
				}
			}
		}
		return false;
	}

	/** Forgets every bucket held; one added while this runs may survive it. */
	@Override
	public void resetAll() {
		this.buckets.forEach((bucket) -> {
			synchronized (bucket) {
				if (!bucket.removed) {
					this.eviction.remove(bucket);
				}
			}
		});
	}

	@Override
	public String name() {
		return RateLimitResult.MEMORY;
	}

	@Override
	public StoreStatus status() {
		return new StoreStatus(RateLimitResult.MEMORY, RateLimitResult.MEMORY, null,
				List.of(new StoreStatus.LocalBuckets(RateLimitResult.MEMORY, size(), this.maximumKeys)));
	}

	/**
	 * The bound on the number of buckets kept.
	 * @return the maximum key count
	 */
	public long maximumKeys() {
		return this.maximumKeys;
	}

	/**
	 * Number of buckets currently kept, after dropping those whose quota is whole again.
	 * @return the bucket count
	 */
	public long size() {
		return this.eviction.size();
	}

	/**
	 * Decides every acquisition at one time, not earlier than any bucket has seen, while
	 * holding every bucket's monitor; adds the created buckets that the request charges.
	 * @return that time, or {@link #RETRY} when a bucket was removed or added meanwhile
	 */
	private long decideAll(List<Acquisition> acquisitions, Bucket[] buckets, boolean[] created,
			RateLimitDecision[] decisions, long now, long maxDelayMicros) {
		long at = now;
		for (Bucket bucket : buckets) {
			if (bucket.removed) {
				return RETRY;
			}
			at = Math.max(at, bucket.lastMicros);
		}
		boolean allowed = true;
		for (int i = 0; i < decisions.length; i++) {
			Acquisition acquisition = acquisitions.get(i);
			buckets[i].advanceTo(at);
			decisions[i] = buckets[i].stateFor(acquisition.limit())
				.check(acquisition.limit(), at, acquisition.cost(), maxDelayMicros);
			allowed &= !decisions[i].rejects();
		}
		if (allowed && !addCharged(buckets, created, decisions)) {
			return RETRY;
		}
		for (int i = 0; i < decisions.length; i++) {
			Acquisition acquisition = acquisitions.get(i);
			if (allowed && decisions[i].allowed()) {
				buckets[i].state.commit(acquisition.limit(), at, acquisition.cost());
			}
			else {
				if (created[i]) {
					// never added: a later look at the key must not take it for a live bucket
					buckets[i].removed = true;
				}
				decisions[i] = decisions[i].uncommitted(acquisition.cost());
			}
			buckets[i].remember(at, decisions[i].remaining(), acquisition.limit().capacity(),
					decisions[i].resetMicros());
		}
		return at;
	}

	/**
	 * Adds the created buckets of an admitted request that it charges, before anything is
	 * committed; when a key was added meanwhile by another request, takes back what it
	 * added and reports it.
	 */
	private boolean addCharged(Bucket[] buckets, boolean[] created, RateLimitDecision[] decisions) {
		for (int i = 0; i < buckets.length; i++) {
			if (created[i] && decisions[i].allowed() && this.buckets.putIfAbsent(buckets[i]) != null) {
				for (int j = 0; j < i; j++) {
					if (created[j] && decisions[j].allowed()) {
						this.eviction.remove(buckets[j]);
					}
				}
				return false;
			}
		}
		return true;
	}

	/** Holds the monitors of {@code buckets} in {@code order} while {@code action} runs. */
	static long lockInOrder(Bucket[] buckets, Integer[] order, int index, LongSupplier action) {
		if (index == order.length) {
			return action.getAsLong();
		}
		synchronized (buckets[order[index]]) {
			return lockInOrder(buckets, order, index + 1, action);
		}
	}

}
