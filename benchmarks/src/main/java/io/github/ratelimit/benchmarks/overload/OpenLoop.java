package io.github.ratelimit.benchmarks.overload;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.time.Duration;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;

/**
 * Sends {@code GET} requests at a fixed arrival rate whatever the server answers (open
 * loop): request {@code i} of a phase is scheduled at {@code start + i / rate}, sent at
 * that time or as soon after as the generator can, and its latency counted from the
 * scheduled time, so that a slow server cannot slow the generator down and hide its own
 * queueing (coordinated omission). A share of the requests carries
 * {@code X-Priority: critical}, the rest {@code X-Priority: sheddable}, drawn from a seeded
 * random sequence. Bounded: every request has a timeout, and at most
 * {@code maxOutstanding} are in flight (the ones over count as errors, never queued).
 */
final class OpenLoop {

	private final HttpClient client;

	private final HttpRequest critical;

	private final HttpRequest sheddable;

	private final double criticalShare;

	private final int maxOutstanding;

	private final AtomicInteger outstanding = new AtomicInteger();

	private final SplittableRandom random = new SplittableRandom(33);

	private final CpuClock cpu;

	/**
	 * Creates a generator.
	 * @param client the HTTP client (HTTP/1.1, one connection per request in flight)
	 * @param uri what every request gets
	 * @param settings the mix and the bounds
	 * @param cpu the CPU time of the service and of the generator
	 */
	OpenLoop(HttpClient client, URI uri, Settings settings, CpuClock cpu) {
		this.cpu = cpu;
		this.client = client;
		this.critical = request(uri, "critical", settings.timeout());
		this.sheddable = request(uri, "sheddable", settings.timeout());
		this.criticalShare = settings.criticalShare();
		this.maxOutstanding = settings.maxOutstanding();
	}

	private static HttpRequest request(URI uri, String priority, Duration timeout) {
		return HttpRequest.newBuilder(uri).timeout(timeout).header("X-Priority", priority).GET().build();
	}

	/**
	 * Runs the phases one after the other, without a pause: the first request of a phase
	 * is scheduled one interval of that phase after the last of the phase before. Returns
	 * when the last phase has sent its last request; answers still come in after.
	 * @param phases the phases, each with the tally it fills
	 */
	void drive(List<Phase> phases) {
		long start = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(10);
		for (Phase phase : phases) {
			double interval = 1e9 / phase.rate();
			long end = start + phase.duration().toNanos();
			long appCpu = this.cpu.app();
			long ownCpu = this.cpu.own();
			for (long i = 0;; i++) {
				long scheduled = start + (long) (i * interval);
				if (scheduled - end >= 0) {
					break;
				}
				long wait;
				while ((wait = scheduled - System.nanoTime()) > 0) {
					LockSupport.parkNanos(wait);
				}
				send(scheduled, phase.tally());
			}
			phase.tally().cpu(since(appCpu, this.cpu.app()), since(ownCpu, this.cpu.own()), end - start);
			start = end;
		}
	}

	private static long since(long before, long now) {
		return (before < 0 || now < 0) ? -1 : now - before;
	}

	private void send(long scheduled, Tally tally) {
		boolean isCritical = this.random.nextDouble() < this.criticalShare;
		if (this.outstanding.incrementAndGet() > this.maxOutstanding) {
			this.outstanding.decrementAndGet();
			tally.overflowed(isCritical);
			return;
		}
		tally.sent(isCritical, System.nanoTime() - scheduled);
		this.client.sendAsync(isCritical ? this.critical : this.sheddable, HttpResponse.BodyHandlers.discarding())
			.whenComplete((response, error) -> {
				long latency = System.nanoTime() - scheduled;
				this.outstanding.decrementAndGet();
				if (response != null) {
					tally.answered(isCritical, response.statusCode(), latency);
				}
				else if (cause(error) instanceof HttpTimeoutException) {
					tally.timedOut(isCritical);
				}
				else {
					tally.failed(isCritical, cause(error));
				}
			});
	}

	private static Throwable cause(Throwable error) {
		return (error instanceof CompletionException && error.getCause() != null) ? error.getCause() : error;
	}

	/**
	 * Waits until every request sent has its answer, a timeout or an error.
	 * @param atMost how long to wait
	 * @return whether none is outstanding
	 */
	boolean awaitAnswers(Duration atMost) {
		long deadline = System.nanoTime() + atMost.toNanos();
		while (this.outstanding.get() > 0) {
			if (System.nanoTime() - deadline >= 0) {
				return false;
			}
			LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(10));
		}
		return true;
	}

	/**
	 * The mix and the bounds of the requests.
	 * @param criticalShare the share of requests sent as critical
	 * @param timeout how long a request may take before it counts as timed out
	 * @param maxOutstanding how many requests may be in flight at once
	 */
	record Settings(double criticalShare, Duration timeout, int maxOutstanding) {
	}

	/**
	 * A stretch of load at one arrival rate.
	 * @param rate requests per second
	 * @param duration how long requests are sent
	 * @param tally what the phase's requests got back
	 */
	record Phase(double rate, Duration duration, Tally tally) {
	}

}
