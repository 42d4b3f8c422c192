package io.github.ratelimit.e2e;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Work the front-end test applications do for callers that hang up: blocking work that
 * goes on when its caller is gone, as a password check or a call to a slow downstream
 * does, counting how often it started and how many ran at once.
 */
final class Hangups {

	/** The slow handler a rate limit guards. */
	static final Hangups SLOW = new Hangups();

	/** The handler a concurrency limit guards. */
	static final Hangups BUSY = new Hangups();

	private final AtomicInteger runs = new AtomicInteger();

	private final AtomicInteger running = new AtomicInteger();

	private final AtomicInteger maxRunning = new AtomicInteger();

	private Hangups() {
	}

	/** Forgets earlier runs. */
	void reset() {
		this.runs.set(0);
		this.maxRunning.set(0);
	}

	/**
	 * Works for a while on the calling thread, whatever interrupts it: a cancelled caller
	 * does not stop it.
	 * @param duration how long
	 */
	void work(Duration duration) {
		this.runs.incrementAndGet();
		this.maxRunning.accumulateAndGet(this.running.incrementAndGet(), Math::max);
		boolean interrupted = false;
		long end = System.nanoTime() + duration.toNanos();
		try {
			for (long left = duration.toNanos(); left > 0; left = end - System.nanoTime()) {
				try {
					Thread.sleep(Math.max(1, left / 1_000_000));
				}
				catch (InterruptedException ex) {
					interrupted = true;
				}
			}
		}
		finally {
			this.running.decrementAndGet();
			if (interrupted) {
				Thread.currentThread().interrupt();
			}
		}
	}

	/** How many times the work started since the last {@link #reset}. */
	int runs() {
		return this.runs.get();
	}

	/** The most that ran at once since the last {@link #reset}. */
	int maxRunning() {
		return this.maxRunning.get();
	}

	/**
	 * Waits until no work runs.
	 * @param timeout the longest wait
	 * @return whether none runs
	 */
	boolean awaitIdle(Duration timeout) throws InterruptedException {
		long end = System.nanoTime() + timeout.toNanos();
		while (this.running.get() > 0 && System.nanoTime() < end) {
			Thread.sleep(10);
		}
		return this.running.get() == 0;
	}

}
