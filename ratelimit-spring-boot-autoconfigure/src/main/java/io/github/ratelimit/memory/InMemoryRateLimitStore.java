package io.github.ratelimit.memory;

import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import com.github.benmanes.caffeine.cache.Expiry;

import io.github.ratelimit.core.Acquisition;
import io.github.ratelimit.core.BucketKey;
import io.github.ratelimit.core.BucketSnapshot;
import io.github.ratelimit.core.BucketState;
import io.github.ratelimit.core.RateLimit;
import io.github.ratelimit.core.RateLimitClock;
import io.github.ratelimit.core.RateLimitDecision;
import io.github.ratelimit.core.RateLimitResult;
import io.github.ratelimit.core.RateLimitStore;
import io.github.ratelimit.core.StoreStatus;

/**
 * Buckets in a bounded Caffeine cache. Each bucket is locked on its own (no global lock,
 * no thread per key); a request with several limits locks their buckets in key order, so
 * the decision is atomic and all-or-nothing without deadlocks. A bucket is forgotten once
 * its state no longer matters (its limit's idle time after the last request, on the
 * store's clock), or when the key count exceeds the bound, least valuable first. A bucket
 * never decides at a time earlier than one it has already decided at, so a request that
 * read the clock before another one for the same bucket but reaches the bucket after it
 * cannot move its window backwards.
 */
public final class InMemoryRateLimitStore implements RateLimitStore {

	/** Default bound on the number of buckets kept. */
	public static final long DEFAULT_MAXIMUM_KEYS = 100_000;

	/**
	 * Caffeine leaves an entry's expiry alone when a read would move it by less than a
	 * second, so a bucket read again within a second of its last refresh would be forgotten
	 * up to a second too early; keeping every bucket a second longer covers that.
	 */
	private static final long EXPIRY_TOLERANCE_NANOS = TimeUnit.SECONDS.toNanos(1);

	private final Cache<BucketKey, Bucket> buckets;

	private final RateLimitClock clock;

	private final long maximumKeys;

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
		this.buckets = Caffeine.newBuilder()
			.maximumSize(maximumKeys)
			.expireAfter(new IdleExpiry())
			.ticker(() -> TimeUnit.MICROSECONDS.toNanos(clock.nowMicros()))
			.build();
	}

	@Override
	public RateLimitResult tryAcquire(List<Acquisition> acquisitions, long maxDelayMicros) {
		long now = this.clock.nowMicros();
		if (acquisitions.size() == 1) {
			Acquisition acquisition = acquisitions.get(0);
			Bucket bucket = bucket(acquisition);
			synchronized (bucket) {
				long at = bucket.advanceTo(now);
				BucketState state = bucket.stateFor(acquisition);
				RateLimitDecision decision = state.check(acquisition.limit(), at, acquisition.cost(), maxDelayMicros);
				if (decision.allowed()) {
					state.commit(acquisition.limit(), at, acquisition.cost());
				}
				return new RateLimitResult(List.of(decision), at);
			}
		}
		RateLimitStore.requireDistinct(acquisitions);
		Bucket[] locked = new Bucket[acquisitions.size()];
		Integer[] order = new Integer[acquisitions.size()];
		for (int i = 0; i < order.length; i++) {
			order[i] = i;
			locked[i] = bucket(acquisitions.get(i));
		}
		Arrays.sort(order, Comparator.comparing((Integer i) -> acquisitions.get(i).key()));
		RateLimitDecision[] decisions = new RateLimitDecision[acquisitions.size()];
		long at = lockInOrder(locked, order, 0, () -> decideAll(acquisitions, locked, decisions, now, maxDelayMicros));
		return new RateLimitResult(Arrays.asList(decisions), at);
	}

	@Override
	public void refund(List<Acquisition> acquisitions, RateLimitResult decided) {
		long timestampMicros = decided.timestampMicros();
		for (Acquisition acquisition : acquisitions) {
			Bucket bucket = this.buckets.getIfPresent(acquisition.key());
			if (bucket != null) {
				synchronized (bucket) {
					bucket.stateFor(acquisition).refund(acquisition.limit(), timestampMicros, acquisition.cost());
				}
			}
		}
	}

	@Override
	public BucketSnapshot inspect(RateLimit limit, String identity) {
		long now = this.clock.nowMicros();
		// quietly: reading a bucket must not keep it from expiring
		Bucket bucket = this.buckets.policy().getIfPresentQuietly(new BucketKey(limit.name(), identity));
		if (bucket != null) {
			synchronized (bucket) {
				if (bucket.state != null && bucket.state.algorithm() == limit.algorithm()) {
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
		return this.buckets.asMap().remove(new BucketKey(limit.name(), identity)) != null;
	}

	@Override
	public void resetAll() {
		this.buckets.invalidateAll();
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
	 * Number of buckets currently kept, after pending expiries.
	 * @return the bucket count
	 */
	public long size() {
		this.buckets.cleanUp();
		return this.buckets.estimatedSize();
	}

	private Bucket bucket(Acquisition acquisition) {
		long idleNanos = idleNanos(acquisition);
		Bucket bucket = this.buckets.get(acquisition.key(), (key) -> new Bucket(idleNanos));
		if (bucket.idleNanos < idleNanos) {
			// the limit changed under the bucket (another plan) and needs its state kept longer
			bucket.idleNanos = idleNanos;
			this.buckets.policy()
				.expireVariably()
				.ifPresent((expiry) -> expiry.setExpiresAfter(acquisition.key(), idleNanos, TimeUnit.NANOSECONDS));
		}
		return bucket;
	}

	private static long idleNanos(Acquisition acquisition) {
		return Math.max(1,
				TimeUnit.MICROSECONDS.toNanos(acquisition.limit().idleTtlMicros()) + EXPIRY_TOLERANCE_NANOS);
	}

	/** Decides every acquisition at one time, not earlier than any bucket has seen; returns that time. */
	private static long decideAll(List<Acquisition> acquisitions, Bucket[] buckets, RateLimitDecision[] decisions,
			long now, long maxDelayMicros) {
		long at = now;
		for (Bucket bucket : buckets) {
			at = Math.max(at, bucket.lastMicros);
		}
		for (Bucket bucket : buckets) {
			bucket.advanceTo(at);
		}
		boolean allowed = true;
		for (int i = 0; i < decisions.length; i++) {
			Acquisition acquisition = acquisitions.get(i);
			decisions[i] = buckets[i].stateFor(acquisition)
				.check(acquisition.limit(), at, acquisition.cost(), maxDelayMicros);
			allowed &= !decisions[i].rejects();
		}
		for (int i = 0; i < decisions.length; i++) {
			Acquisition acquisition = acquisitions.get(i);
			if (allowed && decisions[i].allowed()) {
				buckets[i].stateFor(acquisition).commit(acquisition.limit(), at, acquisition.cost());
			}
			else if (decisions[i].allowed()) {
				decisions[i] = decisions[i].uncommitted(acquisition.cost());
			}
		}
		return at;
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

	/** A bucket's state and how long it may stay idle; guarded by its own monitor. */
	private static final class Bucket {

		/** Longest idle time any limit of this bucket needs; raised when a limit needing more arrives. */
		private volatile long idleNanos;

		private BucketState state;

		/** Latest time this bucket decided at. */
		private long lastMicros = Long.MIN_VALUE;

		Bucket(long idleNanos) {
			this.idleNanos = idleNanos;
		}

		/** The time to decide at: {@code now}, unless this bucket has already seen a later time. */
		long advanceTo(long now) {
			this.lastMicros = Math.max(this.lastMicros, now);
			return this.lastMicros;
		}

		/** The state for the acquisition's algorithm; a changed algorithm starts afresh. */
		BucketState stateFor(Acquisition acquisition) {
			if (this.state == null || this.state.algorithm() != acquisition.limit().algorithm()) {
				this.state = BucketState.create(acquisition.limit());
			}
			return this.state;
		}

	}

	private static final class IdleExpiry implements Expiry<BucketKey, Bucket> {

		@Override
		public long expireAfterCreate(BucketKey key, Bucket bucket, long currentTime) {
			return bucket.idleNanos;
		}

		@Override
		public long expireAfterUpdate(BucketKey key, Bucket bucket, long currentTime, long currentDuration) {
			return bucket.idleNanos;
		}

		@Override
		public long expireAfterRead(BucketKey key, Bucket bucket, long currentTime, long currentDuration) {
			return bucket.idleNanos;
		}

	}

}
