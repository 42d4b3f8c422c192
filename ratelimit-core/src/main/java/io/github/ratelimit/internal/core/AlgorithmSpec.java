package io.github.ratelimit.internal.core;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.Supplier;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.store.RateLimit;

/**
 * Everything the library knows about one algorithm, in one place: how to create its
 * in-memory state, which Lua script decides it in Redis and under which code, which Redis
 * keys a bucket takes and what its parameter is, and what the algorithm can do. Stores,
 * limit validation and plan resolution read it instead of switching on {@link Algorithm}.
 * <p>
 * Adding an algorithm takes its state class ({@link BucketState}), its Lua script (which
 * registers itself in the dispatch table of {@code lib.lua}), one entry here and its
 * tests.
 */
public final class AlgorithmSpec {

	/** A day: more than any change of a time zone's offset lengthens a calendar window by. */
	private static final long CALENDAR_MARGIN_MICROS = 86_400_000_000L;

	/** Period of a limit that sets none: one second. */
	private static final Duration DEFAULT_PERIOD = Duration.ofSeconds(1);

	/** Lease time of a concurrency limit that sets no period: longer than most calls. */
	private static final Duration DEFAULT_LEASE = Duration.ofMinutes(1);

	private static final Map<Algorithm, AlgorithmSpec> SPECS = specs(
			spec(Algorithm.TOKEN_BUCKET, TokenBucket::new).redis("token_bucket.lua", "tb")
				.redisHashable()
				.bucket()
				.reserves()
				.shareable(),
			spec(Algorithm.LEAKY_BUCKET, LeakyBucket::new).redis("leaky_bucket.lua", "lb")
				.redisRequires("token_bucket.lua")
				.redisHashable()
				.bucket()
				.reserves(),
			spec(Algorithm.FIXED_WINDOW, FixedWindow::new).redis("fixed_window.lua", "fw")
				.windowsAligned()
				.shareable(),
			spec(Algorithm.SLIDING_WINDOW_LOG, SlidingWindowLog::new).redis("sliding_window_log.lua", "swl")
				.redisKeySuffixes("", ":sum"),
			spec(Algorithm.SLIDING_WINDOW_COUNTER, SlidingWindowCounter::new)
				.redis("sliding_window_counter.lua", "swc")
				.windowsAligned()
				.windowsRemembered(2)
				.shareable(),
			spec(Algorithm.CONCURRENCY, ConcurrencyLeases::new).redis("concurrency.lua", "cc")
				.heldInFlight()
				.defaultPeriod(DEFAULT_LEASE));

	private final Algorithm algorithm;

	private final Supplier<BucketState> states;

	private final String redisScript;

	private final List<String> redisScripts;

	private final String redisCode;

	private final List<String> redisKeySuffixes;

	private final boolean redisHashable;

	private final boolean bucket;

	private final boolean reserves;

	private final boolean windowsAligned;

	private final int windowsRemembered;

	private final boolean heldInFlight;

	private final Duration defaultPeriod;

	private final boolean shareable;

	private AlgorithmSpec(Builder builder) {
		this.algorithm = builder.algorithm;
		this.states = builder.states;
		this.redisScript = Objects.requireNonNull(builder.redisScript, "redisScript must not be null");
		this.redisScripts = new ArrayList<>(builder.redisRequires);
		this.redisScripts.add(this.redisScript);
		this.redisCode = Objects.requireNonNull(builder.redisCode, "redisCode must not be null");
		this.redisKeySuffixes = builder.redisKeySuffixes;
		this.redisHashable = builder.redisHashable;
		this.bucket = builder.bucket;
		this.reserves = builder.reserves;
		this.windowsAligned = builder.windowsAligned;
		this.windowsRemembered = builder.windowsRemembered;
		this.heldInFlight = builder.heldInFlight;
		this.defaultPeriod = builder.defaultPeriod;
		this.shareable = builder.shareable;
	}

	/**
	 * The spec of an algorithm.
	 * @param algorithm the algorithm
	 * @return its spec
	 */
	public static AlgorithmSpec of(Algorithm algorithm) {
		return SPECS.get(Objects.requireNonNull(algorithm, "algorithm must not be null"));
	}

	/**
	 * Every spec, in the order of {@link Algorithm}.
	 * @return the specs
	 */
	public static Collection<AlgorithmSpec> all() {
		return Collections.unmodifiableCollection(SPECS.values());
	}

	/**
	 * The algorithm described.
	 * @return the algorithm
	 */
	public Algorithm algorithm() {
		return this.algorithm;
	}

	/**
	 * Creates an empty state (a whole quota) for the in-memory store.
	 * @return a new state
	 */
	public BucketState newState() {
		return this.states.get();
	}

	/**
	 * The Lua script, in {@code src-lua/}, that decides this algorithm in Redis and
	 * registers it in the dispatch table under {@link #redisCode()}. A script may use the
	 * functions of the scripts it {@link #redisScripts() requires} (the leaky bucket runs
	 * the token bucket's), which are composed before it.
	 * @return the file name, such as {@code token_bucket.lua}
	 */
	public String redisScript() {
		return this.redisScript;
	}

	/**
	 * Every script the algorithm needs, in the order they are composed: the scripts whose
	 * functions it runs, then its own.
	 * @return the file names, ending with {@link #redisScript()}
	 */
	public List<String> redisScripts() {
		return Collections.unmodifiableList(this.redisScripts);
	}

	/**
	 * The code the composed script dispatches on.
	 * @return the code, such as {@code tb}
	 */
	public String redisCode() {
		return this.redisCode;
	}

	/**
	 * The Redis keys of one bucket, as suffixes of its key: the first is the key itself.
	 * All share the key's hash tag, and so one cluster slot.
	 * @return the suffixes, the first empty
	 */
	public List<String> redisKeySuffixes() {
		return this.redisKeySuffixes;
	}

	/**
	 * Whether a bucket may be a field of a hash shared with other identities (the
	 * hash-per-slot key layout) rather than a key of its own: its script reads and writes
	 * its state through {@code rl_read} and {@code rl_write} of {@code lib.lua}, and its
	 * value begins with the time it stops mattering, which the hash's TTL and the pruning
	 * of its fields read.
	 * @return whether the bucket may be a hash field
	 */
	public boolean redisHashable() {
		return this.redisHashable;
	}

	/**
	 * The parameter the Redis script receives for a limit: the emission interval for the
	 * bucket algorithms, the period for the window algorithms.
	 * @param limit a limit of this algorithm
	 * @return microseconds
	 */
	public long redisParameter(RateLimit limit) {
		return this.bucket ? limit.emissionIntervalMicros() : limit.periodMicros();
	}

	/**
	 * Whether the algorithm is a bucket paced by an emission interval (period divided by
	 * refill tokens) rather than a count per window of the period.
	 * @return whether it is a bucket
	 */
	public boolean bucket() {
		return this.bucket;
	}

	/**
	 * Whether a request the algorithm would reject may instead reserve a future slot (a
	 * caller waiting for a permit); the others decide such a request as any other.
	 * @return whether it reserves
	 */
	public boolean reserves() {
		return this.reserves;
	}

	/**
	 * Whether the algorithm counts per window aligned to the epoch, whose length is the
	 * period (or, for a calendar quota, per calendar window).
	 * @return whether its windows are aligned
	 */
	public boolean windowsAligned() {
		return this.windowsAligned;
	}

	/**
	 * Whether the limit counts calls in flight rather than calls made: what an admitted
	 * call takes is always given back when it completes, and its period is the time after
	 * which a permit nobody gave back (its holder was lost) expires.
	 * @return whether permits are held while the call runs
	 */
	public boolean heldInFlight() {
		return this.heldInFlight;
	}

	/**
	 * The period of a limit of this algorithm that sets none: one second, or for a
	 * concurrency limit a lease of one minute.
	 * @return the default period
	 */
	public Duration defaultPeriod() {
		return this.defaultPeriod;
	}

	/**
	 * Whether units taken from a bucket may be spent later, on one instance, as if taken
	 * then: true for the token bucket, whose tokens do not age, and for the window
	 * algorithms until their window ends. Not for the leaky bucket (its admissions are
	 * slots in time), the sliding log (each entry is a time) or concurrency limits (a
	 * permit is held by one call).
	 * @return whether the local-first store may share the limit's units
	 */
	public boolean shareable() {
		return this.shareable;
	}

	/**
	 * Until when units leased at {@code decidedAtMicros} may be spent: for ever for a
	 * bucket, else until the window they were counted in ends.
	 * @param limit a limit of this algorithm
	 * @param decidedAtMicros the store's time of the lease
	 * @param resetMicros the reset the store answered with the lease (a fixed window's
	 * time until its window ends)
	 * @return epoch microseconds, {@link Long#MAX_VALUE} for ever
	 */
	public long shareExpiresAtMicros(RateLimit limit, long decidedAtMicros, long resetMicros) {
		if (!this.windowsAligned) {
			return Long.MAX_VALUE;
		}
		if (limit.isCalendar()) {
			return decidedAtMicros + resetMicros;
		}
		long period = limit.periodMicros();
		return decidedAtMicros - Math.floorMod(decidedAtMicros, period) + period;
	}

	/**
	 * Whether a plan may give the limit another period: not when the counters belong to
	 * aligned windows of the policy's period, since every plan draws from the same bucket.
	 * @return whether plans may change the period
	 */
	public boolean planMayChangePeriod() {
		return !this.windowsAligned && !this.heldInFlight;
	}

	/**
	 * Time for a whole quota to become available again.
	 * @param limit a limit of this algorithm
	 * @return microseconds
	 */
	public long quotaWindowMicros(RateLimit limit) {
		return this.bucket ? limit.capacity() * limit.emissionIntervalMicros() : limit.periodMicros();
	}

	/**
	 * Time after the last request at which a bucket's state no longer matters: one quota
	 * window, or two for the sliding window counter, whose previous window still weighs
	 * during the next.
	 * A calendar quota's window may be longer than its nominal length when the zone's
	 * offset changes within it, so it is remembered a day longer.
	 * @param limit a limit of this algorithm
	 * @return microseconds
	 */
	public long idleTtlMicros(RateLimit limit) {
		long ttl = this.windowsRemembered * quotaWindowMicros(limit);
		return limit.isCalendar() ? ttl + CALENDAR_MARGIN_MICROS : ttl;
	}

	@Override
	public String toString() {
		return "AlgorithmSpec[" + this.algorithm + ", redis " + this.redisCode + " in " + this.redisScript + "]";
	}

	private static Builder spec(Algorithm algorithm, Supplier<BucketState> states) {
		return new Builder(algorithm, states);
	}

	private static Map<Algorithm, AlgorithmSpec> specs(Builder... builders) {
		Map<Algorithm, AlgorithmSpec> byAlgorithm = new EnumMap<>(Algorithm.class);
		for (Builder builder : builders) {
			if (byAlgorithm.put(builder.algorithm, new AlgorithmSpec(builder)) != null) {
				throw new IllegalStateException("Two specs for " + builder.algorithm);
			}
		}
		for (Algorithm algorithm : Algorithm.values()) {
			if (!byAlgorithm.containsKey(algorithm)) {
				throw new IllegalStateException("No spec for " + algorithm);
			}
		}
		return byAlgorithm;
	}

	/** One entry of the registry, a window algorithm with one key unless said otherwise. */
	private static final class Builder {

		private final Algorithm algorithm;

		private final Supplier<BucketState> states;

		private String redisScript;

		private String redisCode;

		private List<String> redisRequires = List.of();

		private List<String> redisKeySuffixes = List.of("");

		private boolean redisHashable;

		private boolean bucket;

		private boolean reserves;

		private boolean windowsAligned;

		private int windowsRemembered = 1;

		private boolean heldInFlight;

		private Duration defaultPeriod = DEFAULT_PERIOD;

		private boolean shareable;

		Builder(Algorithm algorithm, Supplier<BucketState> states) {
			this.algorithm = algorithm;
			this.states = states;
		}

		Builder redis(String script, String code) {
			this.redisScript = script;
			this.redisCode = code;
			return this;
		}

		Builder redisRequires(String... scripts) {
			this.redisRequires = List.of(scripts);
			return this;
		}

		Builder redisKeySuffixes(String... suffixes) {
			this.redisKeySuffixes = List.of(suffixes);
			return this;
		}

		Builder redisHashable() {
			this.redisHashable = true;
			return this;
		}

		Builder bucket() {
			this.bucket = true;
			return this;
		}

		Builder reserves() {
			this.reserves = true;
			return this;
		}

		Builder windowsAligned() {
			this.windowsAligned = true;
			return this;
		}

		Builder heldInFlight() {
			this.heldInFlight = true;
			return this;
		}

		Builder defaultPeriod(Duration period) {
			this.defaultPeriod = period;
			return this;
		}

		Builder shareable() {
			this.shareable = true;
			return this;
		}

		Builder windowsRemembered(int periods) {
			this.windowsRemembered = periods;
			return this;
		}

	}

}
