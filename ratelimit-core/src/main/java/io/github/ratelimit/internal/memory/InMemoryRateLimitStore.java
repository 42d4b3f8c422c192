package io.github.ratelimit.internal.memory;

import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.locks.ReentrantLock;
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

	/** Slots a new bucket's arrival looks at for buckets whose quota is whole again. */
	private static final int EXPIRY_SLOTS = 2;

	/** Marks a decision that found a bucket removed meanwhile and must look again. */
	private static final long RETRY = Long.MIN_VALUE;

	private final BucketTable buckets;

	private final RateLimitClock clock;

	private final long maximumKeys;

	/** Buckets forgotten at once beyond the bound, so that ranking them is rare. */
	private final long evictionBatch;

	private final ReentrantLock evictionLock = new ReentrantLock();

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
		this.evictionBatch = maximumKeys / 8;
		this.clock = clock;
		int processors = Runtime.getRuntime().availableProcessors();
		this.buckets = new BucketTable(Math.max(2, Integer.highestOneBit(Math.min(64, 4 * processors))));
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
				added(bucket, now);
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
						added(locked[i], now);
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
				added(bucket, now);
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
						rankOfState(bucket, now, probe);
					}
				}
			}
		}
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
					remove(bucket);
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
					remove(bucket);
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
		long now = this.clock.nowMicros();
		MutableDecision probe = new MutableDecision();
		this.buckets.forEach((bucket) -> dropIfWhole(bucket, now, probe));
		return this.buckets.size();
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
						remove(buckets[j]);
					}
				}
				return false;
			}
		}
		return true;
	}

	/** Holds the monitors of {@code buckets} in {@code order} while {@code action} runs. */
	private static long lockInOrder(Bucket[] buckets, Integer[] order, int index, LongSupplier action) {
		if (index == order.length) {
			return action.getAsLong();
		}
		synchronized (buckets[order[index]]) {
			return lockInOrder(buckets, order, index + 1, action);
		}
	}

	/**
	 * After a bucket was added, and with no bucket's monitor held: drops a few buckets whose
	 * quota is whole again, and ranks and forgets buckets when the store holds more than its
	 * bound.
	 */
	private void added(Bucket bucket, long now) {
		MutableDecision probe = new MutableDecision();
		this.buckets.forSomeOf(bucket.hash, EXPIRY_SLOTS, (other) -> dropIfWhole(other, now, probe));
		long size = this.buckets.size();
		if (size <= this.maximumKeys) {
			return;
		}
		// past the bound by a batch, wait for the ranking under way rather than grow further
		if (size > this.maximumKeys + this.evictionBatch) {
			this.evictionLock.lock();
		}
		else if (!this.evictionLock.tryLock()) {
			return;
		}
		try {
			evict();
		}
		finally {
			this.evictionLock.unlock();
		}
	}

	/** Removes a bucket whose quota is whole again. */
	private void dropIfWhole(Bucket bucket, long now, MutableDecision probe) {
		if (bucket.rankAt(now) >= 0) {
			// its latest decision left part of the quota in use, and none has come back since
			return;
		}
		synchronized (bucket) {
			if (!bucket.removed && rankOfState(bucket, now, probe) == 0) {
				remove(bucket);
			}
		}
	}

	/**
	 * Ranks every bucket and forgets the lowest ranked until the store holds a batch less
	 * than its bound; buckets whose quota is whole again are dropped on the way. A bucket
	 * whose rank rose between the ranking and its turn is kept.
	 */
	private void evict() {
		for (int round = 0; round < 2 && this.buckets.size() > this.maximumKeys; round++) {
			long now = this.clock.nowMicros();
			MutableDecision probe = new MutableDecision();
			Ranking ranking = new Ranking((int) Math.min(Integer.MAX_VALUE - 8, this.buckets.size() + 16));
			this.buckets.forEach((bucket) -> {
				int rank = bucket.rankAt(now);
				if (rank < 0) {
					synchronized (bucket) {
						if (bucket.removed) {
							return;
						}
						rank = rankOfState(bucket, now, probe);
						if (rank == 0) {
							remove(bucket);
							return;
						}
					}
				}
				ranking.add(bucket, rank);
			});
			long excess = this.buckets.size() - (this.maximumKeys - this.evictionBatch);
			if (excess > 0) {
				ranking.forgetLowest(excess, (bucket, threshold) -> {
					synchronized (bucket) {
						if (bucket.removed) {
							return false;
						}
						int rank = bucket.rankAt(now);
						if (rank < 0) {
							rank = rankOfState(bucket, now, probe);
						}
						if (rank > threshold) {
							return false;
						}
						remove(bucket);
						return true;
					}
				});
			}
		}
	}

	/**
	 * How far a bucket is from a fresh one, read from its state, the order in which the
	 * store forgets buckets: 0 when its quota is whole (the same as no bucket); otherwise
	 * first how much of its quota is in use, in quarters, with a used-up bucket above
	 * every other, then the time until more quota becomes available (a window about to
	 * end ranks below one that has just begun). Refreshes what the bucket remembers of its
	 * quota. The caller holds the bucket's monitor.
	 */
	private static int rankOfState(Bucket bucket, long now, MutableDecision probe) {
		RateLimit limit = bucket.limit;
		long at = Math.max(now, bucket.lastMicros);
		bucket.state.check(limit, at, 1, 0, probe);
		long capacity = limit.capacity();
		long available = probe.allowed() ? Math.min(capacity, probe.remaining() + 1) : probe.remaining();
		bucket.remember(at, available, capacity, probe.resetMicros());
		int level = Bucket.level(available, capacity);
		return (level == Bucket.WHOLE) ? 0 : (level << 12) | Bucket.timeCode(probe.resetMicros());
	}

	/** Removes a bucket from the table; the caller holds its monitor. */
	private void remove(Bucket bucket) {
		bucket.removed = true;
		this.buckets.remove(bucket);
	}

	/** Forgets a bucket chosen by a ranking, unless its rank rose above the threshold since. */
	@FunctionalInterface
	private interface Forgetter {

		boolean forget(Bucket bucket, int threshold);

	}

	/**
	 * The buckets seen by one ranking pass, with their ranks and how many have each rank;
	 * only the evicting thread uses it.
	 */
	private static final class Ranking {

		private final int[] histogram = new int[Bucket.RANKS];

		private Bucket[] buckets;

		private int[] ranks;

		private int size;

		Ranking(int expected) {
			this.buckets = new Bucket[expected];
			this.ranks = new int[expected];
		}

		void add(Bucket bucket, int rank) {
			if (this.size == this.buckets.length) {
				int length = this.size + (this.size >> 1) + 16;
				this.buckets = Arrays.copyOf(this.buckets, length);
				this.ranks = Arrays.copyOf(this.ranks, length);
			}
			this.buckets[this.size] = bucket;
			this.ranks[this.size] = rank;
			this.size++;
			this.histogram[rank]++;
		}

		/**
		 * Forgets the {@code count} lowest ranked buckets: every bucket ranked below the
		 * rank of the last one needed, then as many of those ranked equal to it as remain.
		 */
		void forgetLowest(long count, Forgetter forgetter) {
			int threshold = 0;
			long below = 0;
			while (threshold < this.histogram.length - 1 && below + this.histogram[threshold] < count) {
				below += this.histogram[threshold];
				threshold++;
			}
			long equal = count - below;
			for (int i = 0; i < this.size; i++) {
				if (this.ranks[i] < threshold) {
					forgetter.forget(this.buckets[i], threshold);
				}
			}
			for (int i = 0; i < this.size && equal > 0; i++) {
				if (this.ranks[i] == threshold && forgetter.forget(this.buckets[i], threshold)) {
					equal--;
				}
			}
		}

	}

}
