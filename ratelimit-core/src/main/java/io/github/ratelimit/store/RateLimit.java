package io.github.ratelimit.store;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.time.ZoneId;
import java.util.Arrays;
import java.util.Base64;
import java.util.Objects;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.CalendarPeriod;
import io.github.ratelimit.FailMode;
import io.github.ratelimit.internal.core.AlgorithmSpec;
import io.github.ratelimit.internal.core.CalendarWindows;

/**
 * One effective limit: a name (which identifies its buckets), an algorithm and its
 * parameters. Immutable and validated: a limit that could never admit a request cannot be
 * created.
 *
 * @param name the limit name, shared by every endpoint that uses the same policy
 * @param algorithm the algorithm
 * @param capacity bucket size, or requests per window
 * @param refillTokens tokens added per period (bucket algorithms); 0 means capacity
 * @param period refill period or window length
 * @param failMode what the limit does when its store cannot answer
 * @param shadow whether the limit only records what it would reject (shadow mode)
 * @param calendar the calendar unit the windows of a {@link Algorithm#FIXED_WINDOW} limit
 * are aligned to, or {@link CalendarPeriod#NONE} for windows of the period aligned to the
 * epoch; a calendar quota's period is {@link #calendarPeriod(CalendarPeriod) the unit's
 * nominal length}
 * @param timeZone the time zone whose local midnight starts a calendar quota's windows;
 * {@link #DEFAULT_TIME_ZONE} for every other limit
 */
public record RateLimit(String name, Algorithm algorithm, long capacity, long refillTokens, Duration period,
		FailMode failMode, boolean shadow, CalendarPeriod calendar, ZoneId timeZone) {

	/** Time zone of calendar quotas that name none. */
	public static final ZoneId DEFAULT_TIME_ZONE = ZoneId.of("UTC");

	/** Suffix of the name of a policy's candidate limit, evaluated beside it in shadow mode. */
	public static final String CANDIDATE_SUFFIX = " (candidate)";

	/** Largest time span the stores compute with exactly (2^53 microseconds, about 285 years). */
	static final long MAX_SPAN_MICROS = 1L << 53;

	/** Largest capacity of a concurrency limit, whose state holds one lease per unit. */
	public static final long MAX_CONCURRENCY = 100_000;

	public RateLimit {
		Objects.requireNonNull(name, "name must not be null");
		Objects.requireNonNull(algorithm, "algorithm must not be null");
		Objects.requireNonNull(period, "period must not be null");
		Objects.requireNonNull(failMode, "failMode must not be null");
		calendar = (calendar != null) ? calendar : CalendarPeriod.NONE;
		timeZone = (timeZone != null) ? timeZone : DEFAULT_TIME_ZONE;
		if (calendar != CalendarPeriod.NONE) {
			if (algorithm != Algorithm.FIXED_WINDOW) {
				throw new IllegalArgumentException("a calendar quota is a fixed window, not a " + algorithm);
			}
			if (!period.equals(calendarPeriod(calendar))) {
				throw new IllegalArgumentException("the period of a calendar quota per " + calendar + " is "
						+ calendarPeriod(calendar) + ": " + period);
			}
		}
		else if (!timeZone.equals(DEFAULT_TIME_ZONE)) {
			throw new IllegalArgumentException("a time zone applies to calendar quotas only: " + timeZone);
		}
		if (name.isBlank()) {
			throw new IllegalArgumentException("name must not be blank");
		}
		if (capacity <= 0) {
			throw new IllegalArgumentException("capacity must be positive: " + capacity);
		}
		if (refillTokens < 0) {
			throw new IllegalArgumentException("refillTokens must not be negative: " + refillTokens);
		}
		if (refillTokens == 0) {
			refillTokens = capacity;
		}
		if (period.isNegative() || period.isZero()) {
			throw new IllegalArgumentException("period must be positive: " + period);
		}
		if (period.compareTo(Duration.ofMillis(1)) < 0) {
			throw new IllegalArgumentException("period must be at least 1ms: " + period);
		}
		if (period.compareTo(Duration.ofDays(365 * 100)) > 0) {
			throw new IllegalArgumentException("period must be at most 100 years: " + period);
		}
		if (algorithm == Algorithm.CONCURRENCY && capacity > MAX_CONCURRENCY) {
			throw new IllegalArgumentException("a concurrency limit keeps one lease per call in flight, so at most "
					+ MAX_CONCURRENCY + ": " + capacity);
		}
		long periodMicros = period.toNanos() / 1_000;
		long interval = ceilDiv(periodMicros, refillTokens);
		boolean bucket = AlgorithmSpec.of(algorithm).bucket();
		if (bucket && (interval > MAX_SPAN_MICROS / capacity)) {
			throw new IllegalArgumentException("capacity " + capacity + " refilled at " + refillTokens + " per "
					+ period + " takes longer than 285 years to refill");
		}
		// only the sliding window counter weighs counts by time (capacity × period); a fixed
		// window or a log counts whole calls, so a calendar month may hold millions
		if (algorithm == Algorithm.SLIDING_WINDOW_COUNTER && capacity > MAX_SPAN_MICROS / periodMicros) {
			throw new IllegalArgumentException(
					"capacity " + capacity + " per " + period + " is too large; use a shorter period");
		}
	}

	/**
	 * Creates a limit that is not a calendar quota.
	 * @param name the name
	 * @param algorithm the algorithm
	 * @param capacity the capacity
	 * @param refillTokens tokens added per period; 0 means capacity
	 * @param period the period
	 * @param failMode what the limit does when its store cannot answer
	 * @param shadow whether the limit only records what it would reject
	 */
	public RateLimit(String name, Algorithm algorithm, long capacity, long refillTokens, Duration period,
			FailMode failMode, boolean shadow) {
		this(name, algorithm, capacity, refillTokens, period, failMode, shadow, CalendarPeriod.NONE,
				DEFAULT_TIME_ZONE);
	}

	/**
	 * Creates a limit that fails open.
	 * @param name the name
	 * @param algorithm the algorithm
	 * @param capacity the capacity
	 * @param refillTokens tokens added per period; 0 means capacity
	 * @param period the period
	 */
	public RateLimit(String name, Algorithm algorithm, long capacity, long refillTokens, Duration period) {
		this(name, algorithm, capacity, refillTokens, period, FailMode.OPEN, false);
	}

	/**
	 * Creates an enforced limit.
	 * @param name the name
	 * @param algorithm the algorithm
	 * @param capacity the capacity
	 * @param refillTokens tokens added per period; 0 means capacity
	 * @param period the period
	 * @param failMode what the limit does when its store cannot answer
	 */
	public RateLimit(String name, Algorithm algorithm, long capacity, long refillTokens, Duration period,
			FailMode failMode) {
		this(name, algorithm, capacity, refillTokens, period, failMode, false);
	}

	/**
	 * This limit scaled down to a share of its quota (capacity and refill), at least one
	 * unit each, as the local fallback enforces it while the store is failing.
	 * @param factor the share, in (0, 1]
	 * @return the reduced limit, with the same name
	 */
	public RateLimit scaledBy(double factor) {
		if (factor >= 1) {
			return this;
		}
		long reducedCapacity = Math.max(1, (long) Math.floor(this.capacity * factor));
		long reducedRefill = Math.max(1, (long) Math.floor(this.refillTokens * factor));
		return new RateLimit(this.name, this.algorithm, reducedCapacity, reducedRefill, this.period, this.failMode,
				this.shadow, this.calendar, this.timeZone);
	}

	/**
	 * Creates a limit that refills {@code capacity} per period.
	 * @param name the name
	 * @param algorithm the algorithm
	 * @param capacity the capacity
	 * @param period the period
	 * @return the limit
	 */
	public static RateLimit of(String name, Algorithm algorithm, long capacity, Duration period) {
		return new RateLimit(name, algorithm, capacity, capacity, period);
	}

	/**
	 * Creates a calendar quota that fails open: at most {@code capacity} per calendar day,
	 * week or month in a time zone.
	 * @param name the name
	 * @param capacity requests per window
	 * @param calendar the calendar unit, not {@link CalendarPeriod#NONE}
	 * @param timeZone the time zone whose local midnight starts the windows
	 * @return the limit
	 */
	public static RateLimit calendar(String name, long capacity, CalendarPeriod calendar, ZoneId timeZone) {
		return new RateLimit(name, Algorithm.FIXED_WINDOW, capacity, capacity, calendarPeriod(calendar), FailMode.OPEN,
				false, calendar, timeZone);
	}

	/**
	 * The period of a calendar quota: the nominal length of its unit (1 day, 7 days, or 31
	 * days for a month), which bounds its capacity as a period does; its windows are as long
	 * as the calendar says.
	 * @param calendar the calendar unit, not {@link CalendarPeriod#NONE}
	 * @return the nominal length
	 */
	public static Duration calendarPeriod(CalendarPeriod calendar) {
		return switch (calendar) {
			case DAY -> Duration.ofDays(1);
			case WEEK -> Duration.ofDays(7);
			case MONTH -> Duration.ofDays(31);
			case NONE -> throw new IllegalArgumentException("not a calendar unit: " + calendar);
		};
	}

	/**
	 * Whether this is a calendar quota, whose windows follow the calendar of its time zone.
	 * @return whether {@link #calendar()} is a calendar unit
	 */
	public boolean isCalendar() {
		return this.calendar != CalendarPeriod.NONE;
	}

	/**
	 * Start of the window of a window algorithm that contains an instant: aligned to the
	 * epoch, or to the calendar of a calendar quota.
	 * @param nowMicros the instant
	 * @return the start of its window, in microseconds since the epoch
	 */
	public long windowStartMicros(long nowMicros) {
		if (this.calendar != CalendarPeriod.NONE) {
			return CalendarWindows.startMicros(this.calendar, this.timeZone, nowMicros);
		}
		return nowMicros - Math.floorMod(nowMicros, periodMicros());
	}

	/**
	 * End of the window of a window algorithm that starts at an instant.
	 * @param windowStartMicros the start of a window, as {@link #windowStartMicros} returns it
	 * @return the start of the next window, in microseconds since the epoch
	 */
	public long windowEndMicros(long windowStartMicros) {
		if (this.calendar != CalendarPeriod.NONE) {
			return CalendarWindows.nextStartMicros(this.calendar, this.timeZone, windowStartMicros);
		}
		return windowStartMicros + periodMicros();
	}

	/**
	 * Whether this is a policy's candidate, evaluated beside the enforced limit to compare
	 * them; candidates are never advertised in headers.
	 * @return whether this is a candidate
	 */
	public boolean isCandidate() {
		return this.shadow && this.name.endsWith(CANDIDATE_SUFFIX);
	}

	/**
	 * A short id of the limit's name, the same in every instance of the application: the
	 * first 48 bits of the SHA-256 of the name, as eight characters of URL-safe Base64.
	 * Remote stores name buckets by it rather than by the name, which may be a long route
	 * template, and the actuator endpoint lists it beside the name. The plans of a policy
	 * share its name, and so its id and its buckets.
	 * @return the id, eight characters out of {@code A-Z a-z 0-9 - _}
	 */
	public String id() {
		try {
			byte[] digest = MessageDigest.getInstance("SHA-256").digest(this.name.getBytes(StandardCharsets.UTF_8));
			return Base64.getUrlEncoder().withoutPadding().encodeToString(Arrays.copyOf(digest, 6));
		}
		catch (NoSuchAlgorithmException ex) {
			throw new IllegalStateException("SHA-256 is required by the Java platform", ex);
		}
	}

	/**
	 * Period in microseconds.
	 * @return the period
	 */
	public long periodMicros() {
		return this.period.toNanos() / 1_000;
	}

	/**
	 * Time between two tokens for the bucket algorithms, rounded up to a whole
	 * microsecond so that every store computes with the same integers.
	 * @return microseconds per token, at least 1
	 */
	public long emissionIntervalMicros() {
		return Math.max(1, ceilDiv(periodMicros(), this.refillTokens));
	}

	/**
	 * Time after the last request at which the state of a bucket no longer matters: a
	 * store may forget it then.
	 * @return microseconds
	 */
	public long idleTtlMicros() {
		return AlgorithmSpec.of(this.algorithm).idleTtlMicros(this);
	}

	/**
	 * Time for a whole quota to become available again, as advertised in the
	 * {@code w} parameter of {@code RateLimit-Policy}; for a calendar quota, whose windows
	 * differ in length, the nominal length of its unit (a decision says the length of its
	 * own window, {@link RateLimitDecision#windowMicros()}).
	 * @return microseconds
	 */
	public long quotaWindowMicros() {
		return AlgorithmSpec.of(this.algorithm).quotaWindowMicros(this);
	}

	private static long ceilDiv(long x, long y) {
		return -Math.floorDiv(-x, y);
	}

}
