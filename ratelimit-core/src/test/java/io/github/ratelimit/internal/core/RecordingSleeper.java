package io.github.ratelimit.internal.core;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

import io.github.ratelimit.store.contract.MutableClock;

/**
 * A sleeper that records how long it was asked to sleep instead of sleeping; it can move
 * a clock by each sleep, and can throw as if the thread had been interrupted.
 */
public final class RecordingSleeper implements RateLimitSleeper {

	private final List<Long> sleeps = Collections.synchronizedList(new ArrayList<>());

	private volatile MutableClock clock;

	private volatile boolean interruptNext;

	@Override
	public void sleep(long micros) throws InterruptedException {
		if (this.interruptNext) {
			this.interruptNext = false;
			throw new InterruptedException();
		}
		this.sleeps.add(micros);
		MutableClock moved = this.clock;
		if (moved != null) {
			moved.advanceMicros(micros);
		}
	}

	/**
	 * Moves a clock forward by every later sleep.
	 * @param clock the clock
	 */
	public void advance(MutableClock clock) {
		this.clock = clock;
	}

	/**
	 * Makes the next sleep throw {@link InterruptedException}.
	 */
	public void interruptNext() {
		this.interruptNext = true;
	}

	/**
	 * The sleeps so far, in order.
	 * @return microseconds
	 */
	public List<Long> sleeps() {
		synchronized (this.sleeps) {
			return List.copyOf(this.sleeps);
		}
	}

}
