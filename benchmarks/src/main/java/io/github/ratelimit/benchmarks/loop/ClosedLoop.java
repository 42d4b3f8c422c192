package io.github.ratelimit.benchmarks.loop;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

import org.HdrHistogram.Histogram;

/**
 * Callers deciding in a closed loop for a bounded time, as the remote-store benchmarks run
 * them: each caller is a platform thread that blocks on every decision, as a servlet thread
 * does, and records its latency in a histogram of its own.
 */
public final class ClosedLoop {

	private static final long HIGHEST_MICROS = TimeUnit.SECONDS.toMicros(10);

	private ClosedLoop() {
	}

	/** Decides one request. */
	@FunctionalInterface
	public interface Decider {

		/**
		 * Decides one request of cost 1.
		 * @param identity whose bucket pays
		 * @return whether the request is admitted
		 */
		boolean decide(String identity);

	}

	/**
	 * Runs {@code callers} threads deciding in a closed loop for {@code duration}.
	 * @param decider what decides
	 * @param workload {@code hot} (every caller on the identity {@code hot}) or {@code many}
	 * (each decision for an identity drawn at random from {@code ids})
	 * @param callers concurrent callers
	 * @param ids the identities of the {@code many} workload
	 * @param duration how long the callers decide
	 * @return what the callers decided, and how fast
	 * @throws InterruptedException when interrupted
	 */
	public static Result run(Decider decider, String workload, int callers, String[] ids, Duration duration)
			throws InterruptedException {
		boolean hot = workload.equals("hot");
		if (!hot && !workload.equals("many")) {
			throw new IllegalArgumentException("--workloads: hot or many, not " + workload);
		}
		Histogram[] histograms = new Histogram[callers];
		AtomicLong admitted = new AtomicLong();
		AtomicLong rejected = new AtomicLong();
		AtomicLong errors = new AtomicLong();
		AtomicReference<RuntimeException> firstError = new AtomicReference<>();
		CountDownLatch ready = new CountDownLatch(callers);
		CountDownLatch go = new CountDownLatch(1);
		long[] deadline = new long[1];
		Thread[] threads = new Thread[callers];
		for (int t = 0; t < callers; t++) {
			Histogram histogram = new Histogram(HIGHEST_MICROS, 3);
			histograms[t] = histogram;
			threads[t] = new Thread(() -> {
				ThreadLocalRandom random = ThreadLocalRandom.current();
				long yes = 0;
				long no = 0;
				long failed = 0;
				ready.countDown();
				try {
					go.await();
				}
				catch (InterruptedException ex) {
					return;
				}
				long end = deadline[0];
				while (true) {
					String identity = hot ? "hot" : ids[random.nextInt(ids.length)];
					long start = System.nanoTime();
					if (start - end >= 0) {
						break;
					}
					try {
						if (decider.decide(identity)) {
							yes++;
						}
						else {
							no++;
						}
					}
					catch (RuntimeException ex) {
						failed++;
						firstError.compareAndSet(null, ex);
					}
					histogram.recordValue(Math.min(HIGHEST_MICROS, (System.nanoTime() - start) / 1_000));
				}
				admitted.addAndGet(yes);
				rejected.addAndGet(no);
				errors.addAndGet(failed);
			}, "caller-" + t);
			threads[t].start();
		}
		ready.await();
		long started = System.nanoTime();
		deadline[0] = started + duration.toNanos();
		go.countDown();
		for (Thread thread : threads) {
			thread.join();
		}
		long elapsed = System.nanoTime() - started;
		if (firstError.get() != null) {
			// the errors column counts failures; this says what the first one was
			System.err.println("# " + errors.get() + " decisions failed, the first with " + firstError.get());
		}
		Histogram latency = new Histogram(HIGHEST_MICROS, 3);
		for (Histogram histogram : histograms) {
			latency.add(histogram);
		}
		return new Result(admitted.get() + rejected.get() + errors.get(), admitted.get(), errors.get(), elapsed,
				latency.getValueAtPercentile(50), latency.getValueAtPercentile(99));
	}

	/**
	 * What one run decided.
	 * @param decisions decisions taken, failed ones included
	 * @param admitted decisions that admitted
	 * @param errors decisions that failed
	 * @param elapsedNanos how long the run took
	 * @param p50Micros median latency
	 * @param p99Micros 99th percentile latency
	 */
	public record Result(long decisions, long admitted, long errors, long elapsedNanos, long p50Micros,
			long p99Micros) {

		/**
		 * Decisions per second.
		 * @return the rate
		 */
		public double perSecond() {
			return this.decisions * 1e9 / this.elapsedNanos;
		}

	}

}
