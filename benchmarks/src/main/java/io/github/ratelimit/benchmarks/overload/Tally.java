package io.github.ratelimit.benchmarks.overload;

import java.util.Locale;
import java.util.concurrent.TimeUnit;

import org.HdrHistogram.Histogram;

/**
 * What one phase of open-loop load got back, by priority. Latencies run from each
 * request's scheduled send time, so a server (or a generator) that falls behind is charged
 * for the wait. Thread-safe: the HTTP client's threads record, the driver reads at the end.
 */
final class Tally {

	private static final long HIGHEST_MICROS = TimeUnit.SECONDS.toMicros(120);

	private final long sloMicros;

	private final Count critical = new Count();

	private final Count sheddable = new Count();

	private final Histogram sendLagMicros = new Histogram(HIGHEST_MICROS, 3);

	private String firstError;

	// the CPU time the service and the generator used during the phase, as a share of the wall time
	private double appCpu = Double.NaN;

	private double ownCpu = Double.NaN;

	/**
	 * Creates an empty tally.
	 * @param sloMicros the latency objective a 2xx response must meet to count as goodput
	 */
	Tally(long sloMicros) {
		this.sloMicros = sloMicros;
	}

	/** The header of {@link #row}'s table. */
	static final String HEADER = """
			| variant | load | offered req/s | 2xx/s | goodput/s (2xx ≤ SLO) | goodput ÷ capacity \
			| critical p50 ms | critical p99 ms | critical admitted | sheddable admitted | 503 | timeouts | errors \
			| app CPU |
			|---|---|---|---|---|---|---|---|---|---|---|---|---|---|""";

	synchronized void sent(boolean isCritical, long lagNanos) {
		count(isCritical).sent++;
		this.sendLagMicros.recordValue(Math.min(HIGHEST_MICROS, Math.max(0, lagNanos / 1_000)));
	}

	synchronized void answered(boolean isCritical, int status, long latencyNanos) {
		Count count = count(isCritical);
		if (status >= 200 && status < 300) {
			long micros = Math.min(HIGHEST_MICROS, latencyNanos / 1_000);
			count.ok++;
			count.okMicros.recordValue(micros);
			if (micros <= this.sloMicros) {
				count.okWithinSlo++;
			}
		}
		else if (status == 503) {
			count.shed++;
		}
		else {
			count.errors++;
			noteError("status " + status);
		}
	}

	synchronized void timedOut(boolean isCritical) {
		count(isCritical).timeouts++;
	}

	synchronized void failed(boolean isCritical, Throwable error) {
		count(isCritical).errors++;
		noteError(error.toString());
	}

	/** A request the generator did not send because too many were outstanding. */
	synchronized void overflowed(boolean isCritical) {
		count(isCritical).sent++;
		count(isCritical).errors++;
		noteError("not sent: the generator's bound on outstanding requests was reached");
	}

	/**
	 * Notes how much CPU time the service and the generator used during the phase.
	 * @param appCpuNanos the service's CPU time, negative when unknown
	 * @param ownCpuNanos the generator's CPU time, negative when unknown
	 * @param wallNanos how long the phase lasted
	 */
	synchronized void cpu(long appCpuNanos, long ownCpuNanos, long wallNanos) {
		this.appCpu = (appCpuNanos >= 0) ? (double) appCpuNanos / wallNanos : Double.NaN;
		this.ownCpu = (ownCpuNanos >= 0) ? (double) ownCpuNanos / wallNanos : Double.NaN;
	}

	private void noteError(String error) {
		if (this.firstError == null) {
			this.firstError = error;
		}
	}

	private Count count(boolean isCritical) {
		return isCritical ? this.critical : this.sheddable;
	}

	/**
	 * The phase as a row of {@link #HEADER}'s table.
	 * @param variant the protection
	 * @param load the load's name ({@code 2×})
	 * @param seconds how long the phase sent
	 * @param capacity the service's capacity, in requests per second
	 * @return the row
	 */
	synchronized String row(String variant, String load, double seconds, double capacity) {
		long sent = this.critical.sent + this.sheddable.sent;
		long ok = this.critical.ok + this.sheddable.ok;
		double goodput = (this.critical.okWithinSlo + this.sheddable.okWithinSlo) / seconds;
		return String.format(Locale.ROOT, "| %s | %s | %.0f | %.0f | %.0f | %.2f | %s | %s | %s | %s | %d | %d | %d | %s |",
				variant, load, sent / seconds, ok / seconds, goodput, goodput / capacity,
				millis(this.critical, 50), millis(this.critical, 99), share(this.critical), share(this.sheddable),
				this.critical.shed + this.sheddable.shed, this.critical.timeouts + this.sheddable.timeouts,
				this.critical.errors + this.sheddable.errors, percent(this.appCpu));
	}

	/**
	 * What the row leaves out: how late the generator sent, and the first error.
	 * @return a line for a comment
	 */
	synchronized String notes() {
		String lag = String.format(Locale.ROOT, "send lag p99 %.1f ms, max %.1f ms, generator CPU %s",
				this.sendLagMicros.getValueAtPercentile(99) / 1000.0, this.sendLagMicros.getMaxValue() / 1000.0,
				percent(this.ownCpu));
		return (this.firstError != null) ? lag + "; first error: " + this.firstError : lag;
	}

	/**
	 * The share of critical requests admitted (2xx).
	 * @return between 0 and 1, or NaN when none was sent
	 */
	synchronized double criticalAdmitted() {
		return (double) this.critical.ok / this.critical.sent;
	}

	private static String millis(Count count, double percentile) {
		if (count.ok == 0) {
			return "–";
		}
		return String.format(Locale.ROOT, "%.1f", count.okMicros.getValueAtPercentile(percentile) / 1000.0);
	}

	private static String percent(double share) {
		return Double.isNaN(share) ? "–" : String.format(Locale.ROOT, "%.0f%%", 100 * share);
	}

	private static String share(Count count) {
		if (count.sent == 0) {
			return "–";
		}
		return String.format(Locale.ROOT, "%.1f%%", 100.0 * count.ok / count.sent);
	}

	/** The answers to one priority's requests. */
	private static final class Count {

		private final Histogram okMicros = new Histogram(HIGHEST_MICROS, 3);

		private long sent;

		private long ok;

		private long okWithinSlo;

		private long shed;

		private long timeouts;

		private long errors;

	}

}
