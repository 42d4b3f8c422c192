package io.github.ratelimit.internal.redis;

import java.util.concurrent.atomic.AtomicLongArray;

/**
 * The deadlines of the store's script calls in Redis time: the Redis {@code TIME} after
 * which the caller no longer waits for a call's reply, so that a script Redis runs later
 * (queued behind a slow command, a fork, a pause) changes nothing.
 * <p>
 * Redis's clock and this application's differ by an unknown offset, so the deadline is
 * not read from the application's wall clock: every reply carries the Redis time at which
 * the script ran, which lies between the moment its call was prepared and the moment its
 * reply arrived, on this JVM's monotonic clock ({@link System#nanoTime()}). Each reply
 * therefore bounds the offset from both sides; the deadline uses the least upper bound
 * seen, which is never below the true offset, so no call is judged late before its caller
 * gave up, and is above it by at most the shortest trip to Redis observed (how late a script
 * may still take effect). Should a reply prove the estimate too low (the Redis clock was
 * stepped forward, or a Cluster slot moved to a server whose clock is ahead), it is raised
 * to that reply's bound. A Cluster keeps one estimate per slot, since its nodes are servers
 * of their own; a slot not heard from yet uses the estimate of all replies.
 * <p>
 * Until a first reply or {@link #observe observed} {@code TIME}, calls carry no deadline.
 */
final class RedisDeadlines {

	/** No estimate yet. */
	private static final long UNKNOWN = Long.MIN_VALUE;

	/** Number of Redis Cluster hash slots. */
	private static final int SLOTS = 16384;

	private final long timeoutNanos;

	/**
	 * By slot (a single cell outside a Cluster), the least upper bound of the Redis time in
	 * microseconds minus {@code System.nanoTime() / 1000}, or {@link #UNKNOWN}.
	 */
	private final AtomicLongArray offsets;

	/** The same estimate over every reply, for a slot not heard from yet. */
	private final AtomicLongArray any = new AtomicLongArray(1);

	/**
	 * Creates the deadlines of calls the store waits {@code timeoutNanos} for.
	 * @param timeoutNanos how long the store waits for a reply
	 * @param cluster whether the store talks to a Redis Cluster, whose slots are served by
	 * servers with clocks of their own
	 */
	RedisDeadlines(long timeoutNanos, boolean cluster) {
		this.timeoutNanos = timeoutNanos;
		this.offsets = new AtomicLongArray(cluster ? SLOTS : 1);
		for (int i = 0; i < this.offsets.length(); i++) {
			this.offsets.set(i, UNKNOWN);
		}
		this.any.set(0, UNKNOWN);
	}

	/**
	 * The deadline of a call prepared now: the Redis time at which its caller stops waiting.
	 * @param slot the Cluster slot of the call's keys (ignored outside a Cluster)
	 * @param preparedNanos {@link System#nanoTime()} when the call was prepared, before its
	 * caller's wait starts
	 * @return the deadline in microseconds of Redis time, or {@code -1} while no estimate is
	 * known
	 */
	long deadline(int slot, long preparedNanos) {
		long offset = this.offsets.get(index(slot));
		if (offset == UNKNOWN) {
			offset = this.any.get(0);
			if (offset == UNKNOWN) {
				return -1;
			}
		}
		return (preparedNanos + this.timeoutNanos) / 1000 + offset;
	}

	/**
	 * Learns from a reply that Redis read {@code redisMicros} from {@code TIME} between
	 * {@code sentNanos} and {@code receivedNanos}.
	 * @param slot the Cluster slot of the call's keys (ignored outside a Cluster), or
	 * {@code -1} when the reply came from any node
	 * @param sentNanos {@link System#nanoTime()} before the call was sent
	 * @param receivedNanos {@link System#nanoTime()} after its reply arrived
	 * @param redisMicros the Redis time the reply carries
	 */
	void observe(int slot, long sentNanos, long receivedNanos, long redisMicros) {
		long upper = redisMicros - sentNanos / 1000;
		long lower = redisMicros - receivedNanos / 1000;
		if (slot >= 0 || this.offsets.length() == 1) {
			update(this.offsets, index(slot), upper, lower);
		}
		update(this.any, 0, upper, lower);
	}

	private int index(int slot) {
		return (this.offsets.length() == 1) ? 0 : slot;
	}

	/**
	 * Lowers the estimate to a tighter upper bound; raises it when a reply's lower bound
	 * is above it, which proves it wrong.
	 */
	private static void update(AtomicLongArray estimates, int index, long upper, long lower) {
		while (true) {
			long current = estimates.get(index);
			long next = (current == UNKNOWN || lower > current) ? upper : Math.min(current, upper);
			if (next == current || estimates.compareAndSet(index, current, next)) {
				return;
			}
		}
	}

}
