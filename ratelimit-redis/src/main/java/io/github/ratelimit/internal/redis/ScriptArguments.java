package io.github.ratelimit.internal.redis;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Locale;

import io.github.ratelimit.internal.core.RateLimitClock;

/**
 * Encodes the keys and arguments of one script call deciding some buckets of one slot:
 * the time (empty for Redis {@code TIME}), the mode, then five arguments per bucket (code,
 * capacity, parameter, cost, hash field), then the options (a least TTL, the longest
 * delay, the deadline) when any is set, then a lease's extras, or a settlement's
 * timestamp and actual costs.
 */
final class ScriptArguments {

	/** The time argument that makes the script read Redis {@code TIME}. */
	static final long NOW_FROM_REDIS = Long.MIN_VALUE;

	/** Least TTL of keys written at an explicit time (tests), whatever their state needs. */
	private static final byte[] TEST_MIN_TTL_MILLIS = ascii("60000");

	private static final byte[] EMPTY = new byte[0];

	/** Costs and counts as the script receives them, encoded once. */
	private static final byte[][] SMALL_NUMBERS = new byte[64][];

	static {
		for (int i = 0; i < SMALL_NUMBERS.length; i++) {
			SMALL_NUMBERS[i] = ascii(Integer.toString(i));
		}
	}

	/** What the script does with the buckets of a call. */
	enum Mode {

		/** Takes the costs when every limit admits them. */
		ACQUIRE,

		/** Decides without taking (a later slot once an earlier one rejected). */
		CHECK,

		/** Gives the costs back. */
		REFUND,

		/** Takes the costs and leases extras. */
		LEASE,

		/** Settles reserved costs at actual costs: gives back below, charges beyond. */
		SETTLE;

		private final byte[] bytes = ascii(name().toLowerCase(Locale.ROOT));

	}

	/** Deadlines of the calls that take, or {@code null} when calls carry none. */
	private final RedisDeadlines deadlines;

	/** The clock decided at, or {@code null} for Redis {@code TIME}. */
	private final RateLimitClock clock;

	/** The application's clock, which places the boundaries of calendar windows. */
	private final RateLimitClock applicationClock;

	private final SlotPlanner slots;

	/**
	 * Creates the encoder of a store's calls.
	 * @param deadlines the deadlines of calls that take, or {@code null}
	 * @param clock the clock decided at, or {@code null} for Redis {@code TIME}
	 * @param slots the store's slot planner
	 */
	ScriptArguments(RedisDeadlines deadlines, RateLimitClock clock, SlotPlanner slots) {
		this.deadlines = deadlines;
		this.clock = clock;
		this.applicationClock = (clock != null) ? clock : RateLimitClock.system();
		this.slots = slots;
	}

	/** The time a call decides at: the clock's, or {@link #NOW_FROM_REDIS}. */
	long now() {
		return (this.clock != null) ? this.clock.nowMicros() : NOW_FROM_REDIS;
	}

	RateLimitClock applicationClock() {
		return this.applicationClock;
	}

	/** The script, keys and arguments deciding some buckets of one slot. */
	Invocation prepare(ScriptCall call, int[] group, long now, Mode mode, long maxDelayMicros) {
		return prepare(call, group, now, mode, maxDelayMicros, null);
	}

	/** The same, for a lease: {@code extra} holds the units wanted beyond each cost. */
	Invocation prepare(ScriptCall call, int[] group, long now, Mode mode, long maxDelayMicros, long[] extra) {
		return prepare(call, group, now, mode, maxDelayMicros, extra, 0);
	}

	/**
	 * The script, keys and arguments settling some buckets of one slot, whose costs are
	 * their reservations, at their actual costs.
	 * @param call the reserved acquisitions
	 * @param group the buckets of the slot
	 * @param now the time to charge at, or {@link #NOW_FROM_REDIS}
	 * @param reservedAt the time the reservations were decided at, to give back at
	 * @param actualCosts the actual cost of each bucket of the call
	 * @return the invocation
	 */
	Invocation settle(ScriptCall call, int[] group, long now, long reservedAt, long[] actualCosts) {
		return prepare(call, group, now, Mode.SETTLE, 0, actualCosts, reservedAt);
	}

	private Invocation prepare(ScriptCall call, int[] group, long now, Mode mode, long maxDelayMicros, long[] extra,
			long reservedAt) {
		int keyCount = 0;
		int algorithms = 0;
		for (int i : group) {
			keyCount += call.limits[i].keySuffixes.length;
			algorithms |= call.limits[i].algorithm;
		}
		int slot = this.slots.slot(call, group);
		long prepared = System.nanoTime();
		// a refund or a settlement adjusts what Redis itself took, which nobody else adjusts: it
		// may come late
		boolean late = mode == Mode.REFUND || mode == Mode.SETTLE;
		long deadline = (this.deadlines != null && !late) ? this.deadlines.deadline(slot, prepared) : -1;
		boolean options = this.clock != null || maxDelayMicros > 0 || extra != null || deadline >= 0;
		boolean settle = mode == Mode.SETTLE;
		byte[][] keys = new byte[keyCount][];
		byte[][] args = new byte[3 + group.length * 5 + (options ? 3 : 0) + (settle ? 1 : 0)
				+ ((extra != null) ? group.length : 0)][];
		args[0] = (now == NOW_FROM_REDIS) ? EMPTY : ascii(now);
		args[1] = mode.bytes;
		args[2] = ascii(group.length);
		int k = 0;
		int a = 3;
		for (int i : group) {
			EncodedLimit limit = call.limits[i];
			byte[] key = call.keys[i];
			for (byte[] suffix : limit.keySuffixes) {
				keys[k++] = (suffix.length == 0) ? key : concat(key, suffix);
			}
			args[a++] = limit.code;
			args[a++] = limit.capacity;
			args[a++] = limit.parameter(this.applicationClock);
			args[a++] = ascii(call.costs[i]);
			args[a++] = call.fields[i];
		}
		if (options) {
			// the test clock stands still while Redis expires keys in real time
			args[a++] = (this.clock != null) ? TEST_MIN_TTL_MILLIS : EMPTY;
			args[a++] = ascii(maxDelayMicros);
			args[a++] = (deadline >= 0) ? ascii(deadline) : EMPTY;
		}
		if (settle) {
			args[a++] = ascii(reservedAt);
		}
		if (extra != null) {
			for (int i : group) {
				args[a++] = ascii(extra[i]);
			}
		}
		return new Invocation(Script.of(algorithms), keys, args, slot, prepared);
	}

	static byte[] ascii(long value) {
		if (value >= 0 && value < SMALL_NUMBERS.length) {
			return SMALL_NUMBERS[(int) value];
		}
		return Long.toString(value).getBytes(StandardCharsets.US_ASCII);
	}

	static byte[] ascii(String value) {
		return value.getBytes(StandardCharsets.US_ASCII);
	}

	private static byte[] concat(byte[] first, byte[] second) {
		byte[] both = Arrays.copyOf(first, first.length + second.length);
		System.arraycopy(second, 0, both, first.length, second.length);
		return both;
	}

	/**
	 * One script call: the script and its keys and arguments.
	 * @param script the script
	 * @param keys its keys
	 * @param args its arguments
	 * @param slot the Cluster slot of its keys (0 outside a Cluster)
	 * @param preparedNanos {@link System#nanoTime()} when it was prepared
	 */
	record Invocation(Script script, byte[][] keys, byte[][] args, int slot, long preparedNanos) {

		/** Whether the script reads Redis {@code TIME}, rather than being told the time. */
		boolean atRedisTime() {
			return this.args[0].length == 0;
		}

	}

}
