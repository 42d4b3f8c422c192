package io.github.ratelimit.benchmarks.local;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.internal.core.RateLimiter;
import io.github.ratelimit.internal.memory.InMemoryRateLimitStore;
import io.github.ratelimit.store.Acquisition;
import io.github.ratelimit.store.RateLimit;
import io.github.ratelimit.store.RateLimitDecision;
import io.github.ratelimit.store.RateLimitResult;

/**
 * Replays scripted traffic against every algorithm with the same nominal limit (10
 * requests per second; the buckets hold 10 and refill 10 per second) on a simulated
 * clock, through the in-memory store a request uses, and compares what each admits with
 * the exact answer: at most 10 in any one-second interval, computed here independently of
 * the library. For each scenario and algorithm it prints how many requests were admitted
 * and the most admitted within any one-second interval, and writes, per scenario, the
 * number admitted in the trailing second over time for the chart
 * ({@code benchmarks/accuracy.gnuplot}).
 *
 * <p>Run with {@code java -cp benchmarks/target/benchmarks.jar
 * io.github.ratelimit.benchmarks.local.AccuracySimulation [output directory]} (default
 * {@code benchmarks/target/accuracy}).
 */
public final class AccuracySimulation {

	static final int CAPACITY = 10;

	static final long PERIOD_MICROS = 1_000_000;

	/** 2024-01-01T00:00:00Z: windows are aligned to the epoch, so whole seconds are window edges. */
	static final long START_MICROS = 1_704_067_200_000_000L;

	/** Length of the simulated traffic. */
	static final long SPAN_MICROS = 10 * PERIOD_MICROS;

	/** Step of the trailing-second series written for the chart. */
	private static final long SAMPLE_MICROS = 10_000;

	private static final Algorithm[] ALGORITHMS = Algorithm.values();

	private AccuracySimulation() {
	}

	/**
	 * Runs every scenario and writes the data files.
	 * @param args the output directory, optional
	 * @throws IOException when a data file cannot be written
	 */
	public static void main(String[] args) throws IOException {
		Path out = Path.of((args.length > 0) ? args[0] : "benchmarks/target/accuracy");
		Files.createDirectories(out);
		StringBuilder summary = new StringBuilder();
		summary.append("| scenario | offered | exact |");
		for (Algorithm algorithm : ALGORITHMS) {
			summary.append(' ').append(algorithm).append(" |");
		}
		summary.append('\n').append("|---|---:|---:|").append("---:|".repeat(ALGORITHMS.length)).append('\n');
		for (Scenario scenario : Scenario.values()) {
			long[] requests = scenario.requests();
			long[] exact = exact(requests);
			long[][] admitted = new long[ALGORITHMS.length][];
			for (int a = 0; a < ALGORITHMS.length; a++) {
				admitted[a] = replay(ALGORITHMS[a], requests);
			}
			int log = Arrays.asList(ALGORITHMS).indexOf(Algorithm.SLIDING_WINDOW_LOG);
			if (!Arrays.equals(admitted[log], exact)) {
				throw new IllegalStateException("the sliding window log differs from the exact answer in " + scenario);
			}
			summary.append("| ").append(scenario.label).append(" | ").append(requests.length).append(" | ");
			summary.append(cell(exact)).append(" |");
			for (long[] times : admitted) {
				summary.append(' ').append(cell(times)).append(" |");
			}
			summary.append('\n');
			write(out.resolve(scenario.name().toLowerCase(Locale.ROOT) + ".dat"), requests, exact, admitted);
		}
		Files.writeString(out.resolve("summary.md"), summary);
		System.out.print(summary);
		System.out.println();
		System.out.println("Each cell: admitted (most admitted within any 1 s interval). Limit: " + CAPACITY
				+ " per second. Data files in " + out);
	}

	private static String cell(long[] admitted) {
		return admitted.length + " (" + maxInAnyPeriod(admitted) + ")";
	}

	/** Times of the admitted requests, in order, when the algorithm decides every request. */
	static long[] replay(Algorithm algorithm, long[] requests) {
		long[] now = { START_MICROS };
		RateLimiter limiter = new RateLimiter(new InMemoryRateLimitStore(() -> now[0], 16));
		RateLimit limit = new RateLimit("scripted", algorithm, CAPACITY, CAPACITY, Duration.ofNanos(PERIOD_MICROS * 1_000));
		List<Acquisition> request = List.of(new Acquisition(limit, "client", 1));
		List<Long> admitted = new ArrayList<>();
		for (long time : requests) {
			now[0] = time;
			RateLimitResult result = limiter.acquire(request);
			if (result.allowed()) {
				RateLimitDecision decision = result.decisions().get(0);
				// a leaky bucket admits now and lets the request through at its drain slot: count it when it passes
				admitted.add(time + decision.delayMicros());
			}
		}
		return admitted.stream().mapToLong(Long::longValue).sorted().toArray();
	}

	/**
	 * The exact answer, greedily: a request is admitted when fewer than the capacity were
	 * admitted in the second ending with it (the interval {@code (t − P, t]}).
	 */
	static long[] exact(long[] requests) {
		List<Long> admitted = new ArrayList<>();
		int oldest = 0;
		for (long time : requests) {
			while (oldest < admitted.size() && admitted.get(oldest) <= time - PERIOD_MICROS) {
				oldest++;
			}
			if (admitted.size() - oldest < CAPACITY) {
				admitted.add(time);
			}
		}
		return admitted.stream().mapToLong(Long::longValue).toArray();
	}

	/** Most admitted within any half-open interval {@code [t, t + P)}, over sorted times. */
	static int maxInAnyPeriod(long[] times) {
		int most = 0;
		int end = 0;
		for (int start = 0; start < times.length; start++) {
			while (end < times.length && times[end] < times[start] + PERIOD_MICROS) {
				end++;
			}
			most = Math.max(most, end - start);
		}
		return most;
	}

	/** Number of sorted times within {@code (t − P, t]}. */
	private static int inTrailingPeriod(long[] times, long t) {
		int upper = upperBound(times, t);
		int lower = upperBound(times, t - PERIOD_MICROS);
		return upper - lower;
	}

	/** Index of the first time greater than {@code t}. */
	private static int upperBound(long[] times, long t) {
		int low = 0;
		int high = times.length;
		while (low < high) {
			int mid = (low + high) >>> 1;
			if (times[mid] <= t) {
				low = mid + 1;
			}
			else {
				high = mid;
			}
		}
		return low;
	}

	/** Columns: seconds, offered, exact, then one per algorithm; each the count in the trailing second. */
	private static void write(Path file, long[] requests, long[] exact, long[][] admitted) throws IOException {
		try (PrintWriter writer = new PrintWriter(Files.newBufferedWriter(file))) {
			writer.print("# seconds offered exact");
			for (Algorithm algorithm : ALGORITHMS) {
				writer.print(' ');
				writer.print(algorithm);
			}
			writer.println();
			for (long t = START_MICROS; t <= START_MICROS + SPAN_MICROS + PERIOD_MICROS; t += SAMPLE_MICROS) {
				writer.printf(Locale.ROOT, "%.2f %d %d", (t - START_MICROS) / 1e6, inTrailingPeriod(requests, t),
						inTrailingPeriod(exact, t));
				for (long[] times : admitted) {
					writer.print(' ');
					writer.print(inTrailingPeriod(times, t));
				}
				writer.println();
			}
		}
	}

	/** Scripted traffic, all within {@link #SPAN_MICROS} of {@link #START_MICROS}. */
	enum Scenario {

		/** Twice the limit, evenly spaced: 20 requests per second. */
		STEADY("steady, 2x the limit") {
			@Override
			long[] requests() {
				return evenly(0, SPAN_MICROS, 2 * CAPACITY * SPAN_MICROS / PERIOD_MICROS);
			}
		},

		/** Bursts of 15 within 50 ms at irregular times over a trickle of 2 per second. */
		BURSTY("bursty") {
			@Override
			long[] requests() {
				List<long[]> parts = new ArrayList<>();
				parts.add(evenly(0, SPAN_MICROS, 2 * SPAN_MICROS / PERIOD_MICROS));
				for (long start : new long[] { 300_000, 2_100_000, 2_600_000, 4_800_000, 7_200_000, 7_500_000,
						9_000_000 }) {
					parts.add(evenly(start, start + 50_000, 15));
				}
				return merge(parts);
			}
		},

		/**
		 * At every other window edge, the whole limit in the 100 ms before it and again in
		 * the 100 ms after it.
		 */
		BOUNDARY("boundary bursts") {
			@Override
			long[] requests() {
				List<long[]> parts = new ArrayList<>();
				for (long edge = PERIOD_MICROS; edge < SPAN_MICROS; edge += 2 * PERIOD_MICROS) {
					parts.add(evenly(edge - 100_000, edge, CAPACITY));
					parts.add(evenly(edge, edge + 100_000, CAPACITY));
				}
				return merge(parts);
			}
		};

		final String label;

		Scenario(String label) {
			this.label = label;
		}

		/** Request times, sorted, in microseconds since the epoch. */
		abstract long[] requests();

		/** {@code count} requests evenly spaced over {@code [from, to)}, relative to the start. */
		static long[] evenly(long from, long to, long count) {
			long[] times = new long[(int) count];
			for (int i = 0; i < count; i++) {
				times[i] = START_MICROS + from + (to - from) * i / count;
			}
			return times;
		}

		static long[] merge(List<long[]> parts) {
			return parts.stream().flatMapToLong(Arrays::stream).sorted().toArray();
		}

	}

}
