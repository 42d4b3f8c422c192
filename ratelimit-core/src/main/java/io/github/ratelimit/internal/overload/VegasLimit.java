package io.github.ratelimit.internal.overload;

import java.util.concurrent.TimeUnit;

/**
 * TCP Vegas (Brakmo &amp; Peterson 1994) applied to calls in flight. The fastest recent
 * call is the latency of a service without load; a call slower than that spent the
 * difference queued, and with {@code limit} calls in flight the calls queued are about
 * {@code queue = ceil(limit × (1 − noLoad / rtt))}. The limit grows while fewer than
 * {@code alpha = 3·log10(limit)} calls queue, shrinks when more than
 * {@code beta = 6·log10(limit)} do, and stays between the two.
 * <p>
 * Vegas adjusts its window once per round trip; here every call moves the limit by
 * {@code 1/inFlight} of the step, so the limit moves by about one step per round trip
 * however many calls end in it, and the adjustment does not outrun the latency it reads.
 * The steps per round trip: {@code beta} when nothing queues, {@code log10(limit)} while
 * fewer than {@code alpha} queue, and down by the larger of {@code log10(limit)} and
 * half the excess over {@code beta}, so a limit far above the service's capacity comes
 * down in a few round trips. A drop shrinks the limit by 10%.
 * <p>
 * The no-load latency is re-probed so that a drift of the service's own latency is
 * followed: it is the minimum over the current and the previous window of samples, and a
 * window closes after {@code 30 × limit} samples, shortened by a jitter of up to a half
 * drawn from the ticker, or after ten seconds, whichever comes first. A service that got
 * slower is therefore believed within two windows.
 */
final class VegasLimit extends SampledLimit {

	static final int PROBE_MULTIPLIER = 30;

	static final long PROBE_NANOS = TimeUnit.SECONDS.toNanos(10);

	private static final int MIN_WINDOW_SAMPLES = 10;

	private long windowMin = Long.MAX_VALUE;

	private long previousMin = Long.MAX_VALUE;

	private boolean started;

	private long windowStart;

	private long windowSamples;

	private long windowLength;

	VegasLimit(LimitBounds bounds, long slowNanos) {
		super(bounds, 0.9, slowNanos);
	}

	@Override
	void learn(long startNanos, long rttNanos, int inFlight, boolean inUse) {
		probe(startNanos, rttNanos);
		if (!inUse) {
			return;
		}
		double log = Math.max(1, Math.log10(this.limit));
		double alpha = 3 * log;
		double beta = 6 * log;
		double queue = Math.ceil(this.limit * (1 - (double) noLoadNanos() / rttNanos));
		double step;
		if (queue <= 1) {
			step = beta;
		}
		else if (queue < alpha) {
			step = log;
		}
		else if (queue > beta) {
			step = -Math.max(log, (queue - beta) / 2);
		}
		else {
			return;
		}
		this.limit = this.bounds.clamp(this.limit + step / inFlight);
	}

	/**
	 * The latency of a call that did not queue, as far as the recent samples tell.
	 */
	long noLoadNanos() {
		return Math.min(this.windowMin, this.previousMin);
	}

	private void probe(long nowNanos, long rttNanos) {
		if (!this.started) {
			this.started = true;
			openWindow(nowNanos);
		}
		else if (++this.windowSamples >= this.windowLength || nowNanos - this.windowStart >= PROBE_NANOS) {
			this.previousMin = this.windowMin;
			this.windowMin = Long.MAX_VALUE;
			openWindow(nowNanos);
		}
		this.windowMin = Math.min(this.windowMin, rttNanos);
	}

	private void openWindow(long nowNanos) {
		// the jitter keeps instances that started together from re-probing together
		double jitter = 0.5 + 0.5 * ((mix(nowNanos) >>> 11) * 0x1.0p-53);
		this.windowStart = nowNanos;
		this.windowSamples = 0;
		this.windowLength = Math.max(MIN_WINDOW_SAMPLES, (long) (PROBE_MULTIPLIER * this.limit * jitter));
	}

	private static long mix(long seed) {
		// SplitMix64's finaliser: spreads the ticker's low-entropy bits over the word
		long z = seed + 0x9E3779B97F4A7C15L;
		z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
		z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
		return z ^ (z >>> 31);
	}

}
