package io.github.ratelimit.benchmarks.local;

import java.util.List;
import java.util.concurrent.TimeUnit;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import com.github.benmanes.caffeine.cache.Expiry;

import io.github.ratelimit.internal.core.BucketState;
import io.github.ratelimit.internal.core.RateLimitClock;
import io.github.ratelimit.store.Acquisition;
import io.github.ratelimit.store.BucketKey;
import io.github.ratelimit.store.RateLimitDecision;
import io.github.ratelimit.store.RateLimitResult;
import io.github.ratelimit.store.RateLimitStore;

/**
 * The in-memory store as the library built it on Caffeine up to 0.1.0 snapshots, kept
 * here to measure what the bounded cache costs beside the library's own table: buckets in
 * a Caffeine cache bounded by size (W-TinyLFU) with a per-bucket idle expiry on the
 * store's clock, each bucket locked on its own. Decides single acquisitions only, which is
 * what the benchmarks ask of it.
 */
final class CaffeineBucketStore implements RateLimitStore {

	/** Caffeine leaves an expiry alone when a read moves it by less than a second. */
	private static final long EXPIRY_TOLERANCE_NANOS = TimeUnit.SECONDS.toNanos(1);

	private final Cache<BucketKey, Bucket> buckets;

	private final RateLimitClock clock;

	CaffeineBucketStore(RateLimitClock clock, long maximumKeys) {
		this.clock = clock;
		this.buckets = Caffeine.newBuilder()
			.maximumSize(maximumKeys)
			.expireAfter(new IdleExpiry())
			.ticker(() -> TimeUnit.MICROSECONDS.toNanos(clock.nowMicros()))
			.build();
	}

	@Override
	public RateLimitResult tryAcquire(List<Acquisition> acquisitions, long maxDelayMicros) {
		if (acquisitions.size() != 1) {
			throw new UnsupportedOperationException("decides single acquisitions only");
		}
		long now = this.clock.nowMicros();
		Acquisition acquisition = acquisitions.get(0);
		long idleNanos = Math.max(1,
				TimeUnit.MICROSECONDS.toNanos(acquisition.limit().idleTtlMicros()) + EXPIRY_TOLERANCE_NANOS);
		Bucket bucket = this.buckets.get(acquisition.key(), (key) -> new Bucket(idleNanos));
		synchronized (bucket) {
			bucket.lastMicros = Math.max(bucket.lastMicros, now);
			long at = bucket.lastMicros;
			if (bucket.state == null || bucket.state.algorithm() != acquisition.limit().algorithm()) {
				bucket.state = BucketState.create(acquisition.limit());
			}
			RateLimitDecision decision = bucket.state.check(acquisition.limit(), at, acquisition.cost(),
					maxDelayMicros);
			if (decision.allowed()) {
				bucket.state.commit(acquisition.limit(), at, acquisition.cost());
			}
			return new RateLimitResult(List.of(decision), at);
		}
	}

	@Override
	public void refund(List<Acquisition> acquisitions, RateLimitResult decided) {
		throw new UnsupportedOperationException("decides only");
	}

	private static final class Bucket {

		private final long idleNanos;

		private BucketState state;

		private long lastMicros = Long.MIN_VALUE;

		Bucket(long idleNanos) {
			this.idleNanos = idleNanos;
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
