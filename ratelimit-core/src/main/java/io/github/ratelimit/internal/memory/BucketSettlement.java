package io.github.ratelimit.internal.memory;

import java.util.Arrays;
import java.util.List;

import io.github.ratelimit.internal.core.RateLimitClock;
import io.github.ratelimit.store.Acquisition;
import io.github.ratelimit.store.MutableDecision;
import io.github.ratelimit.store.RateLimit;
import io.github.ratelimit.store.RateLimitResult;

/**
 * Settles the actual costs of admitted acquisitions in the in-memory store: every bucket
 * of one call is adjusted while the monitors of all of them are held, taken in key order
 * as a decision takes them, so that no request sees one limit settled and another not.
 * <p>
 * A bucket that is gone (forgotten when its quota was whole, or reset) has nothing to give
 * back, but a charge creates it: a debt is never lost because the bucket was.
 */
final class BucketSettlement {

	/** Marks a settlement that found a bucket removed or added meanwhile and must look again. */
	private static final long RETRY = Long.MIN_VALUE;

	private final BucketTable buckets;

	private final BucketEviction eviction;

	private final RateLimitClock clock;

	BucketSettlement(BucketTable buckets, BucketEviction eviction, RateLimitClock clock) {
		this.buckets = buckets;
		this.eviction = eviction;
		this.clock = clock;
	}

	/**
	 * Settles each acquisition at its actual cost, giving back at the time it was decided
	 * and charging now.
	 * @param reserved the admitted acquisitions, checked to be settleable
	 * @param decided the result that admitted them
	 * @param actualCosts their actual costs
	 */
	void settle(List<Acquisition> reserved, RateLimitResult decided, long[] actualCosts) {
		int[] involved = involved(reserved, actualCosts);
		if (involved.length == 0) {
			return;
		}
		long now = this.clock.nowMicros();
		int count = involved.length;
		int[] hashes = new int[count];
		Integer[] order = new Integer[count];
		for (int j = 0; j < count; j++) {
			Acquisition acquisition = reserved.get(involved[j]);
			hashes[j] = this.buckets.hash(acquisition.limit().name(), acquisition.identity());
			order[j] = j;
		}
		sortByKey(order, reserved, involved);
		for (;;) {
			Bucket[] locked = new Bucket[count];
			boolean[] created = new boolean[count];
			int present = 0;
			for (int j = 0; j < count; j++) {
				Acquisition acquisition = reserved.get(involved[j]);
				locked[j] = this.buckets.get(hashes[j], acquisition.limit().name(), acquisition.identity());
				if (locked[j] == null && actualCosts[involved[j]] > acquisition.cost()) {
					locked[j] = new Bucket(hashes[j], acquisition.limit(), acquisition.identity());
					created[j] = true;
				}
				present += (locked[j] != null) ? 1 : 0;
			}
			// a missing bucket with nothing to charge has nothing to give back either
			if (present == 0) {
				return;
			}
			Integer[] lockOrder = (present == count) ? order : present(order, locked, present);
			long at = InMemoryRateLimitStore.lockInOrder(locked, lockOrder, 0,
					() -> settleAll(reserved, decided.timestampMicros(), actualCosts, involved, locked, created, now));
			if (at != RETRY) {
				for (int j = 0; j < count; j++) {
					if (created[j]) {
						this.eviction.added(locked[j], now);
					}
				}
				return;
			}
		}
	}

	/**
	 * Sorts positions by the key of their acquisition, limit name then identity, the order
	 * a decision locks buckets in. An insertion sort: a call has a few limits, and it
	 * allocates nothing.
	 */
	private static void sortByKey(Integer[] order, List<Acquisition> reserved, int[] involved) {
		for (int i = 1; i < order.length; i++) {
			Integer moving = order[i];
			Acquisition acquisition = reserved.get(involved[moving]);
			int j = i - 1;
			while (j >= 0 && compareKeys(reserved.get(involved[order[j]]), acquisition) > 0) {
				order[j + 1] = order[j];
				j--;
			}
			order[j + 1] = moving;
		}
	}

	private static int compareKeys(Acquisition a, Acquisition b) {
		int byName = a.limit().name().compareTo(b.limit().name());
		return (byName != 0) ? byName : a.identity().compareTo(b.identity());
	}

	/** The positions of {@code order} whose bucket is there, in that order. */
	private static Integer[] present(Integer[] order, Bucket[] locked, int present) {
		Integer[] lockOrder = new Integer[present];
		int next = 0;
		for (Integer j : order) {
			if (locked[j] != null) {
				lockOrder[next++] = j;
			}
		}
		return lockOrder;
	}

	/** The indexes of the acquisitions whose actual cost differs from their reservation. */
	private static int[] involved(List<Acquisition> reserved, long[] actualCosts) {
		int[] involved = new int[reserved.size()];
		int count = 0;
		for (int i = 0; i < involved.length; i++) {
			if (actualCosts[i] != reserved.get(i).cost()) {
				involved[count++] = i;
			}
		}
		return Arrays.copyOf(involved, count);
	}

	/**
	 * Adjusts every bucket while holding every monitor, at a time not earlier than any of
	 * them has seen; adds the buckets a charge created.
	 * @return that time, or {@link #RETRY} when a bucket was removed or added meanwhile
	 */
	private long settleAll(List<Acquisition> reserved, long timestamp, long[] actualCosts, int[] involved,
			Bucket[] locked, boolean[] created, long now) {
		long at = now;
		for (Bucket bucket : locked) {
			if (bucket != null) {
				if (bucket.removed) {
					return RETRY;
				}
				at = Math.max(at, bucket.lastMicros);
			}
		}
		for (int j = 0; j < locked.length; j++) {
			if (created[j] && this.buckets.putIfAbsent(locked[j]) != null) {
				for (int earlier = 0; earlier < j; earlier++) {
					if (created[earlier]) {
						this.eviction.remove(locked[earlier]);
					}
				}
				return RETRY;
			}
		}
		MutableDecision probe = new MutableDecision();
		for (int j = 0; j < locked.length; j++) {
			Bucket bucket = locked[j];
			if (bucket == null) {
				continue;
			}
			Acquisition acquisition = reserved.get(involved[j]);
			RateLimit limit = acquisition.limit();
			bucket.advanceTo(at);
			bucket.stateFor(limit).settle(limit, timestamp, at, acquisition.cost(), actualCosts[involved[j]]);
			// what the bucket remembers of its quota must follow the debt or the refund
			BucketEviction.rankOfState(bucket, at, probe);
		}
		return at;
	}

}
