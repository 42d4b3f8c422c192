package io.github.ratelimit.internal.memory;

import java.util.Arrays;
import java.util.concurrent.locks.ReentrantLock;

import io.github.ratelimit.internal.core.RateLimitClock;
import io.github.ratelimit.store.MutableDecision;
import io.github.ratelimit.store.RateLimit;

/**
 * Keeps the in-memory store's table within its bound: drops buckets whose quota is whole
 * again (the same as no bucket), a few whenever a bucket is added, and when the table holds
 * more than its bound, ranks every bucket by how close it is to a fresh one and forgets the
 * closest first, an eighth of the bound at a time.
 */
final class BucketEviction {

	/** Slots a new bucket's arrival looks at for buckets whose quota is whole again. */
	private static final int EXPIRY_SLOTS = 2;

	private final BucketTable buckets;

	private final RateLimitClock clock;

	private final long maximumKeys;

	/** Buckets forgotten at once beyond the bound, so that ranking them is rare. */
	private final long evictionBatch;

	private final ReentrantLock evictionLock = new ReentrantLock();

	BucketEviction(BucketTable buckets, RateLimitClock clock, long maximumKeys) {
		this.buckets = buckets;
		this.clock = clock;
		this.maximumKeys = maximumKeys;
		this.evictionBatch = maximumKeys / 8;
	}

	/** Number of buckets kept, after dropping those whose quota is whole again. */
	long size() {
		long now = this.clock.nowMicros();
		MutableDecision probe = new MutableDecision();
		this.buckets.forEach((bucket) -> dropIfWhole(bucket, now, probe));
		return this.buckets.size();
	}

	/**
	 * After a bucket was added, and with no bucket's monitor held: drops a few buckets whose
	 * quota is whole again, and ranks and forgets buckets when the store holds more than its
	 * bound.
	 */
	void added(Bucket bucket, long now) {
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
	static int rankOfState(Bucket bucket, long now, MutableDecision probe) {
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
	void remove(Bucket bucket) {
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
