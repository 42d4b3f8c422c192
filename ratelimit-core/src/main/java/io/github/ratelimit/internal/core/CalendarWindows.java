package io.github.ratelimit.internal.core;

import java.time.DayOfWeek;
import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneId;
import java.time.temporal.TemporalAdjusters;
import java.util.concurrent.TimeUnit;

import io.github.ratelimit.CalendarPeriod;

/**
 * Boundaries of calendar windows: the start of a day, an ISO week (Monday) or a month at
 * local midnight in a time zone, as an instant. Where midnight does not exist on a day
 * (daylight saving time beginning at midnight), the day starts at the first valid local
 * time after it, as {@link LocalDate#atStartOfDay(ZoneId)} says.
 */
public final class CalendarWindows {

	private CalendarWindows() {
	}

	/**
	 * Start of the window containing an instant.
	 * @param unit the calendar unit, not {@link CalendarPeriod#NONE}
	 * @param zone the time zone
	 * @param micros the instant, in microseconds since the epoch
	 * @return the start of its window, in microseconds since the epoch
	 */
	public static long startMicros(CalendarPeriod unit, ZoneId zone, long micros) {
		LocalDate date = LocalDate.ofInstant(instant(micros), zone);
		return micros(first(unit, date), zone);
	}

	/**
	 * Start of the window after the one that starts at a given instant: its end.
	 * @param unit the calendar unit, not {@link CalendarPeriod#NONE}
	 * @param zone the time zone
	 * @param startMicros the start of a window, as {@link #startMicros} returns it
	 * @return the start of the next window, in microseconds since the epoch
	 */
	public static long nextStartMicros(CalendarPeriod unit, ZoneId zone, long startMicros) {
		LocalDate first = first(unit, LocalDate.ofInstant(instant(startMicros), zone));
		LocalDate next = switch (unit) {
			case DAY -> first.plusDays(1);
			case WEEK -> first.plusWeeks(1);
			case MONTH -> first.plusMonths(1);
			case NONE -> throw new IllegalArgumentException("not a calendar unit: " + unit);
		};
		return micros(next, zone);
	}

	/**
	 * The boundaries around an instant: the start of the previous window, of the window
	 * containing it, of the next one and of the one after, so that a store whose own clock
	 * differs from the caller's by less than a window still finds its window among them.
	 * @param unit the calendar unit, not {@link CalendarPeriod#NONE}
	 * @param zone the time zone
	 * @param micros the instant, in microseconds since the epoch
	 * @return four increasing boundaries, in microseconds since the epoch
	 */
	public static long[] boundariesAround(CalendarPeriod unit, ZoneId zone, long micros) {
		long current = startMicros(unit, zone, micros);
		long next = nextStartMicros(unit, zone, current);
		// the instant just before the current window lies in the previous one
		long previous = startMicros(unit, zone, current - 1);
		return new long[] { previous, current, next, nextStartMicros(unit, zone, next) };
	}

	private static LocalDate first(CalendarPeriod unit, LocalDate date) {
		return switch (unit) {
			case DAY -> date;
			case WEEK -> date.with(TemporalAdjusters.previousOrSame(DayOfWeek.MONDAY));
			case MONTH -> date.withDayOfMonth(1);
			case NONE -> throw new IllegalArgumentException("not a calendar unit: " + unit);
		};
	}

	private static Instant instant(long micros) {
		return Instant.ofEpochSecond(Math.floorDiv(micros, 1_000_000L),
				TimeUnit.MICROSECONDS.toNanos(Math.floorMod(micros, 1_000_000L)));
	}

	private static long micros(LocalDate date, ZoneId zone) {
		Instant start = date.atStartOfDay(zone).toInstant();
		return TimeUnit.SECONDS.toMicros(start.getEpochSecond()) + start.getNano() / 1_000;
	}

}
