package io.github.ratelimit.benchmarks.overload;

import java.net.URI;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.OptionalDouble;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * How fast a learned limit comes back after overload: samples the limit every 100 ms
 * through a before phase, an overload phase and an after phase, and reads from the samples
 * the limit before (the median of the before phase's second half), its range during the
 * overload and at its end, and how long after the overload it is back: at 90% of where it
 * was or more, and staying there for a second (a limit that only crosses the mark on its
 * way down again has not recovered). A limit that never fell that far is back after 0 s.
 */
final class Recovery {

	/** The header of {@link #row}'s table. */
	static final String HEADER = """
			| variant | limit before (median) | limit during overload (min–max) | limit as overload ends \
			| back to ≥ 90% after | limit at the end |
			|---|---|---|---|---|---|""";

	private static final long PERIOD_MILLIS = 100;

	private static final long STAYS_NANOS = TimeUnit.SECONDS.toNanos(1);

	private final List<Sample> samples = new ArrayList<>();

	private final ScheduledExecutorService poller = Executors.newSingleThreadScheduledExecutor((runnable) -> {
		Thread thread = new Thread(runnable, "limit-probe");
		thread.setDaemon(true);
		return thread;
	});

	private long startNanos;

	/**
	 * Starts sampling.
	 * @param probe reads the limit
	 * @param uri where the limit is
	 */
	void start(LimitProbe probe, URI uri) {
		this.startNanos = System.nanoTime();
		this.poller.scheduleAtFixedRate(() -> {
			long at = System.nanoTime() - this.startNanos;
			OptionalDouble limit = probe.limit(uri);
			if (limit.isPresent()) {
				synchronized (this.samples) {
					this.samples.add(new Sample(at, limit.getAsDouble()));
				}
			}
		}, 0, PERIOD_MILLIS, TimeUnit.MILLISECONDS);
	}

	/**
	 * Stops sampling.
	 * @throws InterruptedException when interrupted while the last probe ends
	 */
	void stop() throws InterruptedException {
		this.poller.shutdownNow();
		this.poller.awaitTermination(10, TimeUnit.SECONDS);
	}

	/**
	 * The measurement as a row of {@link #HEADER}'s table.
	 * @param variant the protection
	 * @param beforeNanos how long the before phase lasted, from the start of sampling
	 * @param overloadNanos how long the overload phase lasted
	 * @return the row
	 */
	String row(String variant, long beforeNanos, long overloadNanos) {
		List<Sample> all;
		synchronized (this.samples) {
			all = List.copyOf(this.samples);
		}
		if (all.isEmpty()) {
			return "| " + variant + " | no limit found | – | – | – | – |";
		}
		long overloadEnd = beforeNanos + overloadNanos;
		double before = median(all.stream()
			.filter((s) -> s.atNanos() >= beforeNanos / 2 && s.atNanos() < beforeNanos)
			.mapToDouble(Sample::limit)
			.sorted()
			.toArray());
		double min = Double.MAX_VALUE;
		double max = -Double.MAX_VALUE;
		double atEnd = Double.NaN;
		for (Sample sample : all) {
			if (sample.atNanos() >= beforeNanos && sample.atNanos() < overloadEnd) {
				min = Math.min(min, sample.limit());
				max = Math.max(max, sample.limit());
				atEnd = sample.limit();
			}
		}
		long last = all.get(all.size() - 1).atNanos();
		String back = "not within " + seconds(last - overloadEnd) + " s";
		if (min >= 0.9 * before) {
			back = "0 s (it never fell below 90%)";
		}
		else {
			// the first sample after the overload from which the limit stays at 90% or more
			Long since = null;
			for (Sample sample : all) {
				if (sample.atNanos() < overloadEnd) {
					continue;
				}
				if (sample.limit() < 0.9 * before) {
					since = null;
				}
				else if (since == null) {
					since = sample.atNanos();
				}
				if (since != null && sample.atNanos() - since >= STAYS_NANOS) {
					back = seconds(since - overloadEnd) + " s";
					break;
				}
			}
		}
		String during = (min <= max) ? number(min) + "–" + number(max) : "–";
		return "| " + variant + " | " + number(before) + " | " + during + " | " + number(atEnd) + " | " + back + " | "
				+ number(all.get(all.size() - 1).limit()) + " |";
	}

	private static double median(double[] sorted) {
		return (sorted.length == 0) ? Double.NaN : sorted[(sorted.length - 1) / 2];
	}

	private static String seconds(long nanos) {
		return String.format(Locale.ROOT, "%.1f", nanos / 1e9);
	}

	private static String number(double value) {
		if (Double.isNaN(value)) {
			return "–";
		}
		return (value == Math.rint(value)) ? String.valueOf((long) value) : String.format(Locale.ROOT, "%.1f", value);
	}

	/**
	 * One reading of the limit.
	 * @param atNanos when, from the start of sampling
	 * @param limit the limit
	 */
	record Sample(long atNanos, double limit) {
	}

}
