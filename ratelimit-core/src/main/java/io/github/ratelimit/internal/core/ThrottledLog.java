package io.github.ratelimit.internal.core;

import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import java.util.function.LongSupplier;

/**
 * Lets a message through at most once per interval and counts what it held back, so a
 * failing store produces one log line per interval instead of one per request.
 */
public final class ThrottledLog {

	private final long intervalNanos;

	private final LongSupplier ticker;

	private final AtomicLong nextAllowed;

	private final AtomicLong suppressed = new AtomicLong();

	/**
	 * Creates a throttle.
	 * @param intervalNanos the least time between two messages
	 * @param ticker source of nanosecond time
	 */
	public ThrottledLog(long intervalNanos, LongSupplier ticker) {
		this.intervalNanos = intervalNanos;
		this.ticker = ticker;
		this.nextAllowed = new AtomicLong(ticker.getAsLong());
	}

	/**
	 * Passes {@code message} (with the number of messages held back since the last one)
	 * to {@code sink} if the interval has passed, otherwise counts it.
	 * @param message the message
	 * @param sink where messages go
	 * @return whether the message was passed on
	 */
	public boolean log(String message, Consumer<String> sink) {
		long now = this.ticker.getAsLong();
		long next = this.nextAllowed.get();
		// counted before winning: a thread that loses to this one while it logs is held back
		// for the next message, not reported in this one
		long held = this.suppressed.get();
		if (now - next >= 0 && this.nextAllowed.compareAndSet(next, now + this.intervalNanos)) {
			this.suppressed.addAndGet(-held);
			sink.accept((held > 0) ? message + " (" + held + " similar messages suppressed)" : message);
			return true;
		}
		this.suppressed.incrementAndGet();
		return false;
	}

}
