package io.github.ratelimit.internal.core;

import java.util.function.LongSupplier;

/**
 * A small circuit breaker in front of a remote store: after {@code failureThreshold}
 * consecutive failures it opens and the store is not called; after {@code openNanos} one
 * call is let through as a probe, whose success closes the breaker and whose failure
 * opens it again. Thread-safe.
 */
public final class CircuitBreaker {

	/** Breaker states. */
	public enum State {

		/** Calls go to the store. */
		CLOSED,

		/** Calls are refused until the probe time. */
		OPEN,

		/** One probe call is in flight. */
		HALF_OPEN

	}

	private final int failureThreshold;

	private final long openNanos;

	private final LongSupplier ticker;

	// written under the monitor; volatile so that the healthy path reads them without it
	private volatile State state = State.CLOSED;

	private volatile int failures;

	private long openedAt;

	/**
	 * Creates a breaker on the system ticker.
	 * @param failureThreshold consecutive failures that open it
	 * @param openNanos how long it stays open before a probe
	 */
	public CircuitBreaker(int failureThreshold, long openNanos) {
		this(failureThreshold, openNanos, System::nanoTime);
	}

	/**
	 * Creates a breaker.
	 * @param failureThreshold consecutive failures that open it
	 * @param openNanos how long it stays open before a probe
	 * @param ticker source of nanosecond time
	 */
	public CircuitBreaker(int failureThreshold, long openNanos, LongSupplier ticker) {
		if (failureThreshold < 1) {
			throw new IllegalArgumentException("failureThreshold must be positive: " + failureThreshold);
		}
		if (openNanos <= 0) {
			throw new IllegalArgumentException("openNanos must be positive: " + openNanos);
		}
		this.failureThreshold = failureThreshold;
		this.openNanos = openNanos;
		this.ticker = ticker;
	}

	/**
	 * Whether a call may go to the store now. When the open time has passed, the first
	 * caller gets {@code true} as the probe; others keep getting {@code false} until the
	 * probe reports.
	 * @return whether to call the store
	 */
	public boolean tryAcquirePermission() {
		// every request asks: no lock while the store is healthy
		return this.state == State.CLOSED || tryAcquireWhileOpen();
	}

	private synchronized boolean tryAcquireWhileOpen() {
		if (this.state == State.CLOSED) {
			return true;
		}
		if (this.state == State.OPEN && this.ticker.getAsLong() - this.openedAt >= this.openNanos) {
			this.state = State.HALF_OPEN;
			return true;
		}
		return false;
	}

	/**
	 * Reports a successful call. While the breaker is open this changes nothing: the call
	 * was let through before it opened, and only the probe may close it, so that a
	 * flapping store cannot open and close it many times per open time.
	 * @return whether this success closed the breaker (the store recovered)
	 */
	public boolean onSuccess() {
		if (this.state == State.CLOSED && this.failures == 0) {
			return false;
		}
		return onSuccessLocked();
	}

	private synchronized boolean onSuccessLocked() {
		if (this.state == State.OPEN) {
			return false;
		}
		boolean recovered = this.state == State.HALF_OPEN;
		this.state = State.CLOSED;
		this.failures = 0;
		return recovered;
	}

	/**
	 * Reports a failed call.
	 * @return whether this failure opened the breaker
	 */
	public synchronized boolean onFailure() {
		this.failures++;
		if (this.state == State.HALF_OPEN || (this.state == State.CLOSED && this.failures >= this.failureThreshold)) {
			boolean opened = this.state == State.CLOSED;
			this.state = State.OPEN;
			this.openedAt = this.ticker.getAsLong();
			return opened;
		}
		return false;
	}

	/**
	 * Time until the next probe; 0 when closed.
	 * @return nanoseconds
	 */
	public synchronized long nanosUntilProbe() {
		if (this.state == State.CLOSED) {
			return 0;
		}
		return Math.max(0, this.openNanos - (this.ticker.getAsLong() - this.openedAt));
	}

	/**
	 * The current state.
	 * @return the state
	 */
	public State state() {
		return this.state;
	}

}
