package io.github.ratelimit.internal.memory;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.time.Duration;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.store.RateLimit;

/**
 * The buckets of the in-memory store, by key, in open-addressing hash tables (linear
 * probing, tombstones for removed buckets) split into segments. Finding a bucket takes no
 * lock and writes nothing, so a request for an existing bucket costs a hash, a probe and
 * the bucket's own monitor; adding and removing a bucket lock its segment only. A slot is
 * one reference, so a bucket costs its table about 8 bytes rather than a map node.
 * <p>
 * Identities come from clients, so the hash is keyed with a random seed chosen per table:
 * a client that cannot see the seed cannot choose identities that share a probe sequence
 * and make lookups slow, as it could with {@link String#hashCode()}.
 * <p>
 * A bucket found without a lock may have been removed meanwhile: callers lock it and check
 * {@link Bucket#removed} before using it, and look again when it was.
 */
final class BucketTable {

	private static final VarHandle SLOTS = MethodHandles.arrayElementVarHandle(Bucket[].class);

	/** Marks the slot of a removed bucket, so that probes continue past it. */
	private static final Bucket TOMBSTONE = new Bucket(0,
			RateLimit.of("tombstone", Algorithm.FIXED_WINDOW, 1, Duration.ofSeconds(1)), "");

	private static final long MULTIPLIER = 0x9E3779B97F4A7C15L;

	private static final int INITIAL_SLOTS = 8;

	private final Segment[] segments;

	private final int segmentShift;

	private final long seed = new SplittableRandom().nextLong();

	private final AtomicLong size = new AtomicLong();

	/**
	 * Creates an empty table.
	 * @param segments number of segments, a power of two, at least 2
	 */
	BucketTable(int segments) {
		if (segments < 2 || Integer.bitCount(segments) != 1) {
			throw new IllegalArgumentException("segments must be a power of two, at least 2: " + segments);
		}
		this.segments = new Segment[segments];
		for (int i = 0; i < segments; i++) {
			this.segments[i] = new Segment();
		}
		this.segmentShift = Integer.numberOfLeadingZeros(segments) + 1;
	}

	/**
	 * The hash of a key: the limit name's hash (names come from configuration) and every
	 * character of the identity, two at a time, mixed with the table's seed.
	 * @param name the limit name
	 * @param identity the identity
	 * @return the hash
	 */
	int hash(String name, String identity) {
		int length = identity.length();
		long h = (this.seed ^ name.hashCode()) * MULTIPLIER + length;
		int i = 0;
		for (; i + 1 < length; i += 2) {
			h = (h ^ (identity.charAt(i) | ((long) identity.charAt(i + 1) << 16))) * MULTIPLIER;
		}
		if (i < length) {
			h = (h ^ identity.charAt(i)) * MULTIPLIER;
		}
		// the multiplications carry differences only upwards: spread the high bits down
		h ^= h >>> 33;
		h *= 0xFF51AFD7ED558CCDL;
		h ^= h >>> 33;
		return (int) (h ^ (h >>> 32));
	}

	/**
	 * Finds a bucket without locking.
	 * @param hash the key's hash
	 * @param name the limit name
	 * @param identity the identity
	 * @return the bucket, or {@code null}
	 */
	Bucket get(int hash, String name, String identity) {
		Bucket[] table = segmentFor(hash).table;
		int mask = table.length - 1;
		for (int i = hash & mask;; i = (i + 1) & mask) {
			Bucket bucket = (Bucket) SLOTS.getAcquire(table, i);
			if (bucket == null) {
				return null;
			}
			if (bucket.hash == hash && bucket != TOMBSTONE && bucket.matches(name, identity)) {
				return bucket;
			}
		}
	}

	/**
	 * Adds a bucket unless one with its key is there.
	 * @param bucket the bucket
	 * @return the bucket already there, or {@code null} when this one was added
	 */
	Bucket putIfAbsent(Bucket bucket) {
		Bucket present = segmentFor(bucket.hash).putIfAbsent(bucket);
		if (present == null) {
			this.size.incrementAndGet();
		}
		return present;
	}

	/**
	 * Removes a bucket, if it is still there.
	 * @param bucket the bucket
	 */
	void remove(Bucket bucket) {
		if (segmentFor(bucket.hash).remove(bucket)) {
			this.size.decrementAndGet();
		}
	}

	/**
	 * Number of buckets held.
	 * @return the count
	 */
	long size() {
		return this.size.get();
	}

	/**
	 * Hands every bucket held to {@code action}, segment by segment, without locking; a
	 * bucket added or removed meanwhile may or may not be seen.
	 * @param action what to do with each bucket
	 */
	void forEach(Consumer<Bucket> action) {
		for (Segment segment : this.segments) {
			Bucket[] table = segment.table;
			for (int i = 0; i < table.length; i++) {
				Bucket bucket = (Bucket) SLOTS.getAcquire(table, i);
				if (bucket != null && bucket != TOMBSTONE) {
					action.accept(bucket);
				}
			}
		}
	}

	/**
	 * Hands the buckets in the next {@code slots} slots of the segment of {@code hash} to
	 * {@code action}, continuing where the previous call for that segment stopped, so
	 * that repeated calls visit the whole segment.
	 * @param hash a hash in the segment
	 * @param slots how many slots to look at
	 * @param action what to do with each bucket
	 */
	void forSomeOf(int hash, int slots, Consumer<Bucket> action) {
		Segment segment = segmentFor(hash);
		Bucket[] table = segment.table;
		int mask = table.length - 1;
		// racy: two callers may look at the same slots, which costs nothing but the look
		int start = segment.cursor;
		segment.cursor = start + slots;
		for (int i = 0; i < slots; i++) {
			Bucket bucket = (Bucket) SLOTS.getAcquire(table, (start + i) & mask);
			if (bucket != null && bucket != TOMBSTONE) {
				action.accept(bucket);
			}
		}
	}

	private Segment segmentFor(int hash) {
		return this.segments[hash >>> this.segmentShift];
	}

	/**
	 * One open-addressing table. Reads take no lock; writes hold the segment's monitor and
	 * publish slots with release semantics, and a resized table as a whole.
	 */
	private static final class Segment {

		volatile Bucket[] table = new Bucket[INITIAL_SLOTS];

		/** Buckets held; guarded by this. */
		private int live;

		/** Slots not empty: buckets and tombstones; guarded by this. */
		private int used;

		/** Next slot {@link BucketTable#forSomeOf} looks at. */
		int cursor;

		synchronized Bucket putIfAbsent(Bucket bucket) {
			Bucket[] table = this.table;
			if ((this.used + 1) * 4L > table.length * 3L) {
				table = rebuild(table);
			}
			int mask = table.length - 1;
			int free = -1;
			int i = bucket.hash & mask;
			for (;; i = (i + 1) & mask) {
				Bucket present = table[i];
				if (present == null) {
					break;
				}
				if (present == TOMBSTONE) {
					if (free < 0) {
						free = i;
					}
				}
				else if (present.hash == bucket.hash && present.sameKey(bucket)) {
					return present;
				}
			}
			if (free < 0) {
				free = i;
				this.used++;
			}
			SLOTS.setRelease(table, free, bucket);
			this.live++;
			return null;
		}

		synchronized boolean remove(Bucket bucket) {
			Bucket[] table = this.table;
			int mask = table.length - 1;
			for (int i = bucket.hash & mask;; i = (i + 1) & mask) {
				Bucket present = table[i];
				if (present == null) {
					return false;
				}
				if (present == bucket) {
					SLOTS.setRelease(table, i, TOMBSTONE);
					this.live--;
					clearTombstonesBefore((i + 1) & mask, table);
					return true;
				}
			}
		}

		/**
		 * Empties the tombstones just before an empty slot: a probe that passes them stops
		 * at that slot anyway.
		 */
		private void clearTombstonesBefore(int next, Bucket[] table) {
			int mask = table.length - 1;
			if (table[next] != null) {
				return;
			}
			for (int i = (next - 1) & mask; table[i] == TOMBSTONE; i = (i - 1) & mask) {
				SLOTS.setRelease(table, i, null);
				this.used--;
			}
		}

		/** A table holding the live buckets at most half full, without tombstones. */
		private Bucket[] rebuild(Bucket[] old) {
			int length = INITIAL_SLOTS;
			while (length < (this.live + 1) * 2L) {
				length <<= 1;
			}
			Bucket[] table = new Bucket[length];
			int mask = length - 1;
			for (Bucket bucket : old) {
				if (bucket != null && bucket != TOMBSTONE) {
					int i = bucket.hash & mask;
					while (table[i] != null) {
						i = (i + 1) & mask;
					}
					table[i] = bucket;
				}
			}
			this.used = this.live;
			this.table = table;
			return table;
		}

	}

}
