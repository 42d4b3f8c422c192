package io.github.ratelimit.benchmarks.localfirst;

import java.util.HashMap;
import java.util.Map;

/**
 * The approach local-first sharing is compared with: every instance decides against the
 * shared count it last read plus what it admitted since, and every sync interval pushes
 * what it admitted to the shared store and reads the new count back. Nothing is reserved,
 * so between two syncs every instance may spend the same units. This is how gateways with
 * a {@code sync_rate} setting count (Kong's rate-limiting plugins), written here for one
 * bucket so the simulation can run it beside the library's mode; the shared store is
 * plain arithmetic, as its atomic increments in Redis would be.
 * <ul>
 * <li>Token bucket: the shared state is the bucket's level at a time, allowed to go below
 * zero when pushes exceed it (a debt the refill pays off first). An instance sees the
 * level it last read, refilled since at the full rate, less what it admitted since.</li>
 * <li>Fixed window: one counter per window, as Kong keys its counters by period start. An
 * instance sees the count it last read for the current window (0 for a window it has not
 * read yet) plus what it admitted in that window since.</li>
 * </ul>
 */
final class PushDeltaFleet {

	private final boolean window;

	private final long capacity;

	/** Token bucket refill, units per microsecond. */
	private final double ratePerMicro;

	private final long periodMicros;

	// shared state
	private double level;

	private long levelAt;

	private final Map<Long, Long> counts = new HashMap<>();

	// per instance
	private final double[] seenLevel;

	private final long[] seenAt;

	private final long[] seenWindow;

	private final long[] seenCount;

	private final long[] spent;

	private final long[] spentWindow;

	private final Map<Long, Long>[] pending;

	private long pushes;

	@SuppressWarnings("unchecked")
	PushDeltaFleet(boolean window, long capacity, long periodMicros, int instances, long startMicros) {
		this.window = window;
		this.capacity = capacity;
		this.periodMicros = periodMicros;
		this.ratePerMicro = (double) capacity / periodMicros;
		this.level = capacity;
		this.levelAt = startMicros;
		this.seenLevel = new double[instances];
		this.seenAt = new long[instances];
		this.seenWindow = new long[instances];
		this.seenCount = new long[instances];
		this.spent = new long[instances];
		this.spentWindow = new long[instances];
		this.pending = new Map[instances];
		for (int i = 0; i < instances; i++) {
			this.seenLevel[i] = capacity;
			this.seenAt[i] = startMicros;
			this.seenWindow[i] = -1;
			this.spentWindow[i] = -1;
			this.pending[i] = new HashMap<>();
		}
	}

	/** Decides one request of cost 1 on instance {@code i}, from what it knows. */
	boolean tryAcquire(int i, long now) {
		if (this.window) {
			long current = now / this.periodMicros;
			long seen = (this.seenWindow[i] == current) ? this.seenCount[i] : 0;
			if (this.spentWindow[i] != current) {
				this.spentWindow[i] = current;
				this.spent[i] = 0;
			}
			if (seen + this.spent[i] + 1 > this.capacity) {
				return false;
			}
			this.spent[i]++;
			this.pending[i].merge(current, 1L, Long::sum);
			return true;
		}
		double estimate = Math.min(this.capacity, this.seenLevel[i] + this.ratePerMicro * (now - this.seenAt[i]))
				- this.spent[i];
		if (estimate < 1) {
			return false;
		}
		this.spent[i]++;
		return true;
	}

	/** Pushes what instance {@code i} admitted since its last sync, and reads the shared state back. */
	void sync(int i, long now) {
		this.pushes++;
		if (this.window) {
			for (Map.Entry<Long, Long> delta : this.pending[i].entrySet()) {
				this.counts.merge(delta.getKey(), delta.getValue(), Long::sum);
			}
			this.pending[i].clear();
			long current = now / this.periodMicros;
			this.seenWindow[i] = current;
			this.seenCount[i] = this.counts.getOrDefault(current, 0L);
			this.spent[i] = 0;
			this.spentWindow[i] = current;
			return;
		}
		this.level = Math.min(this.capacity, this.level + this.ratePerMicro * (now - this.levelAt)) - this.spent[i];
		this.levelAt = now;
		this.spent[i] = 0;
		this.seenLevel[i] = this.level;
		this.seenAt[i] = now;
	}

	/** Shared-store calls so far: one pipelined push-and-read per sync. */
	long pushes() {
		return this.pushes;
	}

}
