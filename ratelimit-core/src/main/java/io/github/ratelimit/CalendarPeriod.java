package io.github.ratelimit;

/**
 * Calendar unit a fixed window is aligned to, in a time zone: a calendar quota such as
 * "10,000 requests per calendar day" turns over at local midnight rather than every 24
 * hours from the epoch. A window runs from the start of its unit in local time to the start
 * of the next, converted through the zone's rules, so a day may last 23 or 25 hours when
 * daylight saving time begins or ends, and a month lasts from 28 to 31 days.
 */
public enum CalendarPeriod {

	/** Not a calendar quota: windows of the limit's period, aligned to the epoch. */
	NONE,

	/** From local midnight to the next local midnight. */
	DAY,

	/** From Monday at local midnight to the next Monday (ISO-8601 weeks). */
	WEEK,

	/** From the first of the month at local midnight to the first of the next month. */
	MONTH

}
