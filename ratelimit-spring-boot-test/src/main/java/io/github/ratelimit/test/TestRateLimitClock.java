package io.github.ratelimit.test;

import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import io.github.ratelimit.internal.core.RateLimitClock;

/**
 * A {@link RateLimitClock} that stands still until a test moves it, so that a test sees a
 * bucket refill or a window end by calling {@link #advance(Duration)} instead of
 * sleeping. {@link AutoConfigureRateLimitTest} makes it the application's clock, which
 * the stores decide at, and moves it back to its start before every test. Thread-safe.
 */
public final class TestRateLimitClock implements RateLimitClock {

	/**
	 * Where a clock starts unless told otherwise: midnight UTC, so that a window of any
	 * length that divides a day (a second, a minute, an hour) begins exactly then.
	 */
	public static final Instant DEFAULT_START = Instant.parse("2026-01-01T00:00:00Z");

	private final long startMicros;

	private final AtomicLong nowMicros;

	/**
	 * Creates a clock at {@link #DEFAULT_START}.
	 */
	public TestRateLimitClock() {
		this(DEFAULT_START);
	}

	/**
	 * Creates a clock at the given instant, to which {@link #reset()} returns.
	 * @param start where the clock starts
	 */
	public TestRateLimitClock(Instant start) {
		this.startMicros = toMicros(start);
		this.nowMicros = new AtomicLong(this.startMicros);
	}

	@Override
	public long nowMicros() {
		return this.nowMicros.get();
	}

	/**
	 * The time the clock shows.
	 * @return the current instant, at microsecond precision
	 */
	public Instant instant() {
		long micros = this.nowMicros.get();
		return Instant.ofEpochSecond(Math.floorDiv(micros, 1_000_000L), Math.floorMod(micros, 1_000_000L) * 1_000);
	}

	/**
	 * Moves the clock forward: buckets refill and windows end as if that much time had
	 * passed. Stores never decide a bucket at a time earlier than one they decided it at,
	 * so the clock never moves backwards, except by {@link #reset()} between tests.
	 * @param duration how far, at microsecond precision
	 * @return this clock
	 * @throws IllegalArgumentException when the duration is negative
	 */
	public TestRateLimitClock advance(Duration duration) {
		if (duration.isNegative()) {
			throw new IllegalArgumentException("duration must not be negative: " + duration);
		}
		this.nowMicros.addAndGet(TimeUnit.NANOSECONDS.toMicros(duration.toNanos()));
		return this;
	}

	/**
	 * Moves the clock back to where it started. Done between tests, together with
	 * forgetting every bucket: buckets kept from later times would not refill.
	 * @return this clock
	 */
	public TestRateLimitClock reset() {
		this.nowMicros.set(this.startMicros);
		return this;
	}

	private static long toMicros(Instant instant) {
		return Math.addExact(Math.multiplyExact(instant.getEpochSecond(), 1_000_000L), instant.getNano() / 1_000);
	}

	@Override
	public String toString() {
		return "TestRateLimitClock at " + instant();
	}

}
