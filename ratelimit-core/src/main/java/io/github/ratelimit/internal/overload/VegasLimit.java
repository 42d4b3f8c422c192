package io.github.ratelimit.internal.overload;

import java.util.Arrays;
import java.util.concurrent.TimeUnit;

/**
 * TCP Vegas (Brakmo &amp; Peterson 1994) applied to calls in flight. The fastest recent
 * call is the latency of a service without load; a call slower than that spent the
 * difference queued, and with {@code limit} calls in flight the calls queued are about
 * {@code queue = ceil(limit × (1 − noLoad / rtt))}. The limit grows while fewer than
 * {@code alpha = 2·log10(limit)} calls queue, shrinks when more than
 * {@code beta = 4·log10(limit)} do, and stays between the two. These are two thirds of
 * the bounds TCP Vegas and Netflix's Vegas limit use ({@code 3·} and {@code 6·}): a
 * service's calls wait behind a shorter queue at the same throughput (the critical p99
 * at 4× the capacity in {@code benchmarks/overload-bench.sh} fell from 102–112 ms to
 * 73–90 ms). Half of them shortened it further but lost critical calls to the bursts a
 * pause of the service piles up ({@code OverloadSimulationTests}).
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
 * followed: it is the lower of the current and the previous window's estimate, and a
 * window closes after {@code 30 × limit} samples, shortened by a jitter of up to a half
 * drawn from the ticker, or after ten seconds, whichever comes first. A service that got
 * slower is therefore believed within two windows.
 * <p>
 * A window's estimate is its fastest call unless that call is more than three times as
 * fast as the window's 5th percentile: then the calls that fast are of another kind (a
 * status endpoint polled now and then, a cache hit), and the estimate is the fastest of
 * the others. Taking the fastest call regardless would read every ordinary call as queued
 * and hold the limit near its minimum for two windows. Within the current window, calls
 * more than three times as fast as the previous estimate are set aside the same way. The
 * fastest calls are taken only when they make up more than one in twenty of a window that
 * closed on its count of calls, which happens when the covered paths mix kinds of work;
 * {@code paths} and {@code exclude-paths} separate them. A window that closed on time
 * after few calls (an idle service, whose few calls may all be status checks) may make the
 * estimate slower but not three times faster.
 */
final class VegasLimit extends SampledLimit {

	static final int PROBE_MULTIPLIER = 30;

	static final long PROBE_NANOS = TimeUnit.SECONDS.toNanos(10);

	/** The share of a window's calls that may be of a faster kind and set aside. */
	static final double FAST_KIND_SHARE = 0.05;

	/** How many times faster than the others a call of another kind is. */
	static final long FAST_KIND_RATIO = 3;

	private static final int MIN_WINDOW_SAMPLES = 10;

	/** The current window's fastest calls, a max-heap of at most {@code fastestLength}. */
	private long[] fastest = new long[16];

	private int fastestSize;

	private int fastestLength;

	private long windowMin = Long.MAX_VALUE;

	/** The fastest call of the current window not set aside as of a faster kind. */
	private long windowOrdinaryMin = Long.MAX_VALUE;

	private long previousLow = Long.MAX_VALUE;

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
		double alpha = 2 * log;
		double beta = 4 * log;
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
		long current = (this.previousLow == Long.MAX_VALUE) ? this.windowMin : this.windowOrdinaryMin;
		return Math.min(current, this.previousLow);
	}

	private void probe(long nowNanos, long rttNanos) {
		if (!this.started) {
			this.started = true;
			openWindow(nowNanos);
		}
		else if (this.windowSamples >= this.windowLength || nowNanos - this.windowStart >= PROBE_NANOS) {
			long estimate = windowEstimate();
			// a window that closed on time, with few calls, may have seen mostly the fast
			// kind (an idle service's status checks): it may not make the service faster
			if (this.previousLow == Long.MAX_VALUE || this.windowSamples >= this.windowLength
					|| estimate >= this.previousLow / FAST_KIND_RATIO) {
				this.previousLow = estimate;
			}
			openWindow(nowNanos);
		}
		this.windowSamples++;
		this.windowMin = Math.min(this.windowMin, rttNanos);
		if (rttNanos >= this.previousLow / FAST_KIND_RATIO) {
			this.windowOrdinaryMin = Math.min(this.windowOrdinaryMin, rttNanos);
		}
		keepIfFast(rttNanos);
	}

	/**
	 * The closing window's no-load estimate: its fastest call not more than three times as
	 * fast as its 5th percentile (of the calls it saw, however few).
	 */
	private long windowEstimate() {
		long[] sorted = Arrays.copyOf(this.fastest, this.fastestSize);
		Arrays.sort(sorted);
		int rank = (int) Math.min(sorted.length, Math.max(1, Math.ceil(FAST_KIND_SHARE * this.windowSamples)));
		long ordinary = sorted[rank - 1] / FAST_KIND_RATIO;
		for (long rtt : sorted) {
			if (rtt >= ordinary) {
				return rtt;
			}
		}
		return sorted[rank - 1];
	}

	private void openWindow(long nowNanos) {
		// the jitter keeps instances that started together from re-probing together
		double jitter = 0.5 + 0.5 * ((mix(nowNanos) >>> 11) * 0x1.0p-53);
		this.windowStart = nowNanos;
		this.windowSamples = 0;
		this.windowLength = Math.max(MIN_WINDOW_SAMPLES, (long) (PROBE_MULTIPLIER * this.limit * jitter));
		this.windowMin = Long.MAX_VALUE;
		this.windowOrdinaryMin = Long.MAX_VALUE;
		this.fastestLength = (int) Math.ceil(FAST_KIND_SHARE * this.windowLength);
		this.fastestSize = 0;
		if (this.fastest.length < this.fastestLength) {
			this.fastest = new long[this.fastestLength];
		}
	}

	/** Keeps a sample among the window's {@code fastestLength} fastest. */
	private void keepIfFast(long rttNanos) {
		long[] heap = this.fastest;
		if (this.fastestSize < this.fastestLength) {
			int child = this.fastestSize++;
			while (child > 0) {
				int parent = (child - 1) >>> 1;
				if (heap[parent] >= rttNanos) {
					break;
				}
				heap[child] = heap[parent];
				child = parent;
			}
			heap[child] = rttNanos;
		}
		else if (rttNanos < heap[0]) {
			int parent = 0;
			while (true) {
				int child = 2 * parent + 1;
				if (child >= this.fastestSize) {
					break;
				}
				if (child + 1 < this.fastestSize && heap[child + 1] > heap[child]) {
					child++;
				}
				if (heap[child] <= rttNanos) {
					break;
				}
				heap[parent] = heap[child];
				parent = child;
			}
			heap[parent] = rttNanos;
		}
	}

	private static long mix(long seed) {
		// SplitMix64's finaliser: spreads the ticker's low-entropy bits over the word
		long z = seed + 0x9E3779B97F4A7C15L;
		z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
		z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
		return z ^ (z >>> 31);
	}

}
