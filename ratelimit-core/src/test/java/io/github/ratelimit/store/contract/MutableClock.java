package io.github.ratelimit.store.contract;

import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.TimeUnit;

import io.github.ratelimit.internal.core.RateLimitClock;

/**
 * A {@link RateLimitClock} that only moves when a test moves it, so decisions depend on
 * the scripted times and never on how fast the test runs. Thread-safe. A store under the
 * contract reads its time from {@link #nowMicros()}.
 */
public final class MutableClock implements RateLimitClock {

	/** A start time aligned to every window length the tests use (minutes, hours, days). */
	public static final long DEFAULT_START_MICROS = TimeUnit.SECONDS
		.toMicros(Instant.parse("2024-01-01T00:00:00Z").getEpochSecond());

	private volatile long nowMicros;

	/**
	 * Creates a clock at {@link #DEFAULT_START_MICROS}.
	 */
	public MutableClock() {
		this(DEFAULT_START_MICROS);
	}

	/**
	 * Creates a clock at the given time.
	 * @param nowMicros microseconds since the epoch
	 */
	public MutableClock(long nowMicros) {
		this.nowMicros = nowMicros;
	}

	@Override
	public long nowMicros() {
		return this.nowMicros;
	}

	/**
	 * Moves the clock to a time.
	 * @param micros microseconds since the epoch
	 * @return this clock
	 */
	public synchronized MutableClock set(long micros) {
		this.nowMicros = micros;
		return this;
	}

	/**
	 * Moves the clock forward.
	 * @param duration how far, at microsecond precision
	 * @return this clock
	 */
	public synchronized MutableClock advance(Duration duration) {
		return advanceMicros(TimeUnit.NANOSECONDS.toMicros(duration.toNanos()));
	}

	/**
	 * Moves the clock forward.
	 * @param micros how far
	 * @return this clock
	 */
	public synchronized MutableClock advanceMicros(long micros) {
		this.nowMicros += micros;
		return this;
	}

}
