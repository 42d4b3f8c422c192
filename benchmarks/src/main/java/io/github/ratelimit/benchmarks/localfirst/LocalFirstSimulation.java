package io.github.ratelimit.benchmarks.localfirst;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.atomic.AtomicLong;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.internal.core.ShareStore;
import io.github.ratelimit.internal.local.LocalFirstRateLimitStore;
import io.github.ratelimit.internal.core.ThrottledLog;
import io.github.ratelimit.internal.memory.InMemoryRateLimitStore;
import io.github.ratelimit.store.Acquisition;
import io.github.ratelimit.store.BucketSnapshot;
import io.github.ratelimit.store.MutableDecision;
import io.github.ratelimit.store.RateLimit;
import io.github.ratelimit.store.RateLimitResult;
import io.github.ratelimit.store.RateLimitStore;
import io.github.ratelimit.internal.local.LocalFirstSettings;

/**
 * A fleet of {@link LocalFirstRateLimitStore} instances on a simulated clock, sharing one
 * in-memory store leased through {@link ShareStore#over} in place of Redis, against
 * what one exact store admits for the same requests, and beside a fleet that counts the
 * way gateways with a sync rate do ({@link PushDeltaFleet}).
 * <p>
 * Time moves in steps of 1 ms. In each step every instance first syncs, if its interval
 * has come round (instances sync at phases spread evenly over the interval, by calling
 * {@link LocalFirstRateLimitStore#sync()} and waiting for it); then the step's requests, a
 * Poisson number per instance with the instance's mean, are decided in a random order at
 * random instants within the step, all drawn from a seeded generator so that every run
 * replays the same traffic. Every request is decided by the instance's
 * local-first store, by the one exact store (the same request sequence, merged) and by the
 * instance of the push-delta fleet. The shared store counts its calls: one per lease, per
 * give-back and per request it decides itself, as Redis would run one script for each.
 * <p>
 * Per cell of the matrix it reports what was offered and admitted, over- and
 * under-admission against the exact store as a percentage of what the limit allows over
 * the run, the worst excess over the limit in any interval (token bucket: admitted in
 * {@code [s, t]} less capacity + rate × (t − s); fixed window: admitted in one window less
 * its capacity), the requests rejected, and the shared-store calls per second.
 * <p>
 * Run with {@code java -cp benchmarks/target/benchmarks.jar
 * io.github.ratelimit.benchmarks.localfirst.LocalFirstSimulation [--seconds 60]
 * [--instances 2,4,8] [--syncs 5,10,50] [--loads 4,0.5] [--traffic uniform,skewed,rotating]
 * [--capacity 1000] [--seed 1]}: loads are multiples of the limit, traffic how the requests
 * split over the instances.
 */
public final class LocalFirstSimulation {

	/** 2024-01-01T00:00:00Z: windows are aligned to the epoch, so whole seconds are window edges. */
	static final long START_MICROS = 1_704_067_200_000_000L;

	static final long STEP_MICROS = 1_000;

	static final long PERIOD_MICROS = 1_000_000;

	/** Requests offered, as multiples of the limit. */
	static final double[] LOADS = { 0.5, 4 };

	private LocalFirstSimulation() {
	}

	/**
	 * Runs the matrix and prints its tables.
	 * @param args options, see the class description
	 */
	public static void main(String[] args) {
		Map<String, String> options = options(args);
		int seconds = Integer.parseInt(options.getOrDefault("seconds", "60"));
		int[] instances = ints(options.getOrDefault("instances", "2,4,8"));
		int[] syncs = ints(options.getOrDefault("syncs", "5,10,50"));
		double[] loads = Arrays.stream(options.getOrDefault("loads", "4,0.5").split(","))
			.mapToDouble(Double::parseDouble)
			.toArray();
		List<Traffic> traffics = Arrays.stream(options.getOrDefault("traffic", "uniform,skewed").split(","))
			.map((name) -> Traffic.valueOf(name.toUpperCase(Locale.ROOT)))
			.toList();
		long capacity = Long.parseLong(options.getOrDefault("capacity", "1000"));
		long seed = Long.parseLong(options.getOrDefault("seed", "1"));
		long began = System.nanoTime();
		System.out.printf(Locale.ROOT, "Limit %,d per second (token bucket: %,d tokens refilled at %,d per second; "
				+ "fixed window: %,d per 1 s window); %d simulated seconds per cell, 1 ms steps, seed %d.%n", capacity,
				capacity, capacity, capacity, seconds, seed);
		long warnings = 0;
		long worstExact = Long.MIN_VALUE;
		for (double load : loads) {
			System.out.println();
			System.out.printf(Locale.ROOT, "Offered %s the limit (the exact mode: one shared-store call per request, "
					+ "%,.0f/s):%n%n", (load == (long) load) ? (long) load + "x" : load + "x", load * capacity);
			System.out.println("| limit | traffic | instances | sync | offered | exact admits | local-first admits "
					+ "| over | under | worst excess | busiest instance admits, exact / local-first "
					+ "| shared calls/s | push-delta over | push-delta worst excess |");
			System.out.println("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
			for (Algorithm algorithm : List.of(Algorithm.TOKEN_BUCKET, Algorithm.FIXED_WINDOW)) {
				for (Traffic traffic : traffics) {
					for (int size : instances) {
						for (int sync : syncs) {
							Cell cell = run(algorithm, traffic, load, capacity, size, sync, seconds, seed);
							warnings += cell.warnings;
							worstExact = Math.max(worstExact, cell.exactWorstExcess);
							System.out.printf(Locale.ROOT,
									"| %s | %s | %d | %d ms | %,d | %,d | %,d | %.2f%% | %.2f%% | %,d | %.1f%% / %.1f%% "
											+ "| %,.0f | %.2f%% | %,d |%n",
									label(algorithm), traffic.label, size, sync, cell.offered, cell.exact, cell.admitted,
									cell.overPercent(cell.admitted), cell.underPercent(cell.admitted), cell.worstExcess,
									cell.busiestExactPercent(), cell.busiestPercent(), cell.callsPerSecond(),
									cell.overPercent(cell.pushDeltaAdmitted), cell.pushDeltaWorstExcess);
						}
					}
				}
			}
		}
		System.out.println();
		System.out.printf(Locale.ROOT,
				"over/under: admitted above/below the exact store, in %% of what the limit allows over the run "
						+ "(token bucket: capacity + rate x duration = %,d; fixed window: capacity x windows = %,d). "
						+ "worst excess: token bucket, most admitted in any interval [s, t] beyond capacity + rate x "
						+ "(t - s); fixed window, most admitted in one window beyond the capacity (0 or less: never "
						+ "over). busiest instance: the one offered the most requests, its part of all admissions. "
						+ "Worst excess of the exact store itself, as a check: %d. Warnings from the stores: %d. "
						+ "Run in %.0f s.%n",
				capacity + capacity * seconds, capacity * seconds, worstExact, warnings,
				(System.nanoTime() - began) / 1e9);
	}

	static Cell run(Algorithm algorithm, Traffic traffic, double load, long capacity, int size, int syncMillis,
			int seconds, long seed) {
		VirtualClock clock = new VirtualClock(START_MICROS);
		RateLimit limit = new RateLimit("simulated", algorithm, capacity, capacity,
				Duration.ofNanos(PERIOD_MICROS * 1_000));
		InMemoryRateLimitStore sharedBuckets = new InMemoryRateLimitStore(clock, 1_000);
		CountingStore shared = new CountingStore(sharedBuckets);
		ShareStore overShared = ShareStore.over(sharedBuckets, clock);
		ShareStore sharing = (leases) -> {
			shared.calls.incrementAndGet();
			return overShared.grant(leases);
		};
		AtomicLong warnings = new AtomicLong();
		List<LocalFirstRateLimitStore> fleet = new ArrayList<>();
		for (int i = 0; i < size; i++) {
			fleet.add(new LocalFirstRateLimitStore(shared, sharing, new LocalFirstSettings(clock, Duration.ofMillis(syncMillis),
					(any) -> false, 1_000, new ThrottledLog(0, System::nanoTime),
					(message) -> warnings.incrementAndGet())));
		}
		InMemoryRateLimitStore exact = new InMemoryRateLimitStore(clock, 1_000);
		PushDeltaFleet pushDelta = new PushDeltaFleet(algorithm == Algorithm.FIXED_WINDOW, capacity, PERIOD_MICROS,
				size, START_MICROS);
		double meanPerStep = load * capacity * STEP_MICROS / PERIOD_MICROS;
		Random random = new Random(seed);
		int syncSteps = (int) (syncMillis * 1_000 / STEP_MICROS);
		boolean window = algorithm == Algorithm.FIXED_WINDOW;
		Excess ours = new Excess(window, capacity);
		Excess theirs = new Excess(window, capacity);
		Excess reference = new Excess(window, capacity);
		MutableDecision decision = new MutableDecision();
		Cell cell = new Cell(algorithm, capacity, size, seconds);
		long steps = seconds * PERIOD_MICROS / STEP_MICROS;
		int[] arrivals = new int[64];
		long[] offsets = new long[64];
		for (long step = 0; step < steps; step++) {
			long now = START_MICROS + step * STEP_MICROS;
			clock.set(now);
			double[] split = traffic.split(size, now - START_MICROS);
			int requests = 0;
			for (int i = 0; i < size; i++) {
				if ((step + (long) i * syncSteps / size) % syncSteps == 0) {
					fleet.get(i).sync().join();
					pushDelta.sync(i, now);
				}
				for (int r = poisson(random, meanPerStep * split[i]); r > 0; r--) {
					if (requests == arrivals.length) {
						arrivals = Arrays.copyOf(arrivals, 2 * requests);
						offsets = Arrays.copyOf(offsets, 2 * requests);
					}
					arrivals[requests++] = i;
				}
			}
			// the step's requests in a random order, at random instants within the step
			for (int r = 0; r < requests; r++) {
				int other = r + random.nextInt(requests - r);
				int swapped = arrivals[r];
				arrivals[r] = arrivals[other];
				arrivals[other] = swapped;
				offsets[r] = (long) (random.nextDouble() * STEP_MICROS);
			}
			Arrays.sort(offsets, 0, requests);
			for (int r = 0; r < requests; r++) {
				int i = arrivals[r];
				long at = now + offsets[r];
				clock.set(at);
				cell.offered++;
				cell.offeredBy[i]++;
				if (fleet.get(i).tryAcquire(limit, "client", 1, 0, decision)) {
					cell.admitted++;
					cell.admittedBy[i]++;
					ours.admitted(at);
				}
				if (exact.tryAcquire(limit, "client", 1, 0, decision)) {
					cell.exact++;
					cell.exactBy[i]++;
					reference.admitted(at);
				}
				if (pushDelta.tryAcquire(i, at)) {
					cell.pushDeltaAdmitted++;
					theirs.admitted(at);
				}
			}
		}
		cell.calls = shared.calls.get();
		cell.worstExcess = ours.worst();
		cell.pushDeltaWorstExcess = theirs.worst();
		cell.exactWorstExcess = reference.worst();
		cell.warnings = warnings.get();
		return cell;
	}

	/** A Poisson-distributed count with the given mean (Knuth's method, fine for small means). */
	static int poisson(Random random, double mean) {
		double limit = Math.exp(-mean);
		double product = random.nextDouble();
		int count = 0;
		while (product > limit) {
			count++;
			product *= random.nextDouble();
		}
		return count;
	}

	private static String label(Algorithm algorithm) {
		return (algorithm == Algorithm.TOKEN_BUCKET) ? "token bucket" : "fixed window";
	}

	private static Map<String, String> options(String[] args) {
		Map<String, String> options = new HashMap<>();
		for (int i = 0; i + 1 < args.length; i += 2) {
			if (!args[i].startsWith("--")) {
				throw new IllegalArgumentException("expected --option value pairs: " + Arrays.toString(args));
			}
			options.put(args[i].substring(2), args[i + 1]);
		}
		return options;
	}

	private static int[] ints(String list) {
		return Arrays.stream(list.split(",")).mapToInt(Integer::parseInt).toArray();
	}

	/** How the offered requests split over the instances. */
	enum Traffic {

		/** Every instance gets the same share. */
		UNIFORM("uniform") {
			@Override
			double[] split(int instances, long elapsedMicros) {
				double[] split = new double[instances];
				Arrays.fill(split, 1.0 / instances);
				return split;
			}
		},

		/** One instance gets 80%, the others share 20% equally. */
		SKEWED("skewed 80/20") {
			@Override
			double[] split(int instances, long elapsedMicros) {
				double[] split = new double[instances];
				Arrays.fill(split, 0.2 / (instances - 1));
				split[0] = 0.8;
				return split;
			}
		},

		/**
		 * All requests on one instance, moving to the next every 500 ms: the units a share
		 * holds must come back for the next instance to use.
		 */
		ROTATING("rotating, 100% on one") {
			@Override
			double[] split(int instances, long elapsedMicros) {
				double[] split = new double[instances];
				split[(int) (elapsedMicros / 500_000 % instances)] = 1;
				return split;
			}
		};

		final String label;

		Traffic(String label) {
			this.label = label;
		}

		/** Each instance's part of the requests at a time, summing to 1. */
		abstract double[] split(int instances, long elapsedMicros);

	}

	/**
	 * The worst excess over the limit of a sequence of admissions. Token bucket: the most by
	 * which the admissions in any interval {@code [s, t]} exceed capacity + rate × (t − s),
	 * kept online as the largest {@code (n_t − rate·t) − min over s ≤ t of (n_s − 1 −
	 * rate·s)}. Fixed window: the most admitted in one window, less the capacity.
	 */
	static final class Excess {

		private final boolean window;

		private final long capacity;

		private final double ratePerMicro;

		private long count;

		private double lowest = Double.MAX_VALUE;

		private double worst = Double.NEGATIVE_INFINITY;

		private long currentWindow = -1;

		private long inWindow;

		private long worstWindow;

		Excess(boolean window, long capacity) {
			this.window = window;
			this.capacity = capacity;
			this.ratePerMicro = (double) capacity / PERIOD_MICROS;
		}

		void admitted(long now) {
			if (this.window) {
				long current = now / PERIOD_MICROS;
				if (current != this.currentWindow) {
					this.currentWindow = current;
					this.inWindow = 0;
				}
				this.inWindow++;
				this.worstWindow = Math.max(this.worstWindow, this.inWindow);
				return;
			}
			this.count++;
			double at = this.ratePerMicro * (now - START_MICROS);
			this.lowest = Math.min(this.lowest, this.count - 1 - at);
			this.worst = Math.max(this.worst, this.count - at - this.lowest);
		}

		long worst() {
			if (this.window) {
				return this.worstWindow - this.capacity;
			}
			return (this.count == 0) ? -this.capacity : (long) Math.floor(this.worst - this.capacity);
		}

	}

	/** One cell of the matrix. */
	static final class Cell {

		final Algorithm algorithm;

		final long capacity;

		final int seconds;

		final long[] offeredBy;

		final long[] admittedBy;

		final long[] exactBy;

		long offered;

		long exact;

		long admitted;

		long pushDeltaAdmitted;

		long calls;

		long worstExcess;

		long pushDeltaWorstExcess;

		long exactWorstExcess;

		long warnings;

		Cell(Algorithm algorithm, long capacity, int instances, int seconds) {
			this.algorithm = algorithm;
			this.capacity = capacity;
			this.seconds = seconds;
			this.offeredBy = new long[instances];
			this.admittedBy = new long[instances];
			this.exactBy = new long[instances];
		}

		/** What the limit allows over the run, from a full bucket or a fresh window. */
		long allowance() {
			long windows = this.seconds * PERIOD_MICROS / PERIOD_MICROS;
			return (this.algorithm == Algorithm.TOKEN_BUCKET) ? this.capacity + this.capacity * windows
					: this.capacity * windows;
		}

		/** The instance offered the most requests: its part of the exact store's admissions. */
		double busiestExactPercent() {
			return 100.0 * this.exactBy[busiest()] / Math.max(1, this.exact);
		}

		/** The instance offered the most requests: its part of the local-first admissions. */
		double busiestPercent() {
			return 100.0 * this.admittedBy[busiest()] / Math.max(1, this.admitted);
		}

		private int busiest() {
			int busiest = 0;
			for (int i = 1; i < this.offeredBy.length; i++) {
				if (this.offeredBy[i] > this.offeredBy[busiest]) {
					busiest = i;
				}
			}
			return busiest;
		}

		double overPercent(long admitted) {
			return 100.0 * Math.max(0, admitted - this.exact) / allowance();
		}

		double underPercent(long admitted) {
			return 100.0 * Math.max(0, this.exact - admitted) / allowance();
		}

		double callsPerSecond() {
			return (double) this.calls / this.seconds;
		}

	}

	/** The shared store in place of Redis, counting the calls a fleet makes to it. */
	static final class CountingStore implements RateLimitStore {

		final AtomicLong calls = new AtomicLong();

		private final InMemoryRateLimitStore buckets;

		CountingStore(InMemoryRateLimitStore buckets) {
			this.buckets = buckets;
		}

		@Override
		public RateLimitResult tryAcquire(List<Acquisition> acquisitions, long maxDelayMicros) {
			this.calls.incrementAndGet();
			return this.buckets.tryAcquire(acquisitions, maxDelayMicros);
		}

		@Override
		public void refund(List<Acquisition> acquisitions, RateLimitResult decided) {
			this.calls.incrementAndGet();
			this.buckets.refund(acquisitions, decided);
		}

		@Override
		public BucketSnapshot inspect(RateLimit limit, String identity) {
			return this.buckets.inspect(limit, identity);
		}

		@Override
		public String name() {
			return RateLimitResult.REDIS;
		}

	}

}
