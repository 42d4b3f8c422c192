package io.github.ratelimit.internal.redis;

import java.nio.charset.StandardCharsets;

import io.github.ratelimit.internal.core.AlgorithmSpec;
import io.github.ratelimit.internal.core.CalendarWindows;
import io.github.ratelimit.internal.core.RateLimitClock;
import io.github.ratelimit.store.RateLimit;

/**
 * What the script receives for a limit, encoded once: its code, capacity, parameter and
 * key parts; for a calendar quota, the window boundaries around the application's
 * present, encoded again when its clock enters the next window.
 * <p>
 * Redis has no time zone rules, so for a calendar quota the store sends the boundaries of
 * the windows around the application's present (the start of the previous, the current,
 * the next and the following window, computed with {@link java.time.zone.ZoneRules} on
 * the application's clock), and the script counts in the one containing Redis's time.
 */
final class EncodedLimit {

	final RateLimit limit;

	final byte[] code;

	final byte[] capacity;

	private final byte[] parameter;

	/** What ends the key after the identity, see {@link BucketKeys#keyEnd}. */
	private final byte[] keyEnd;

	final byte[][] keySuffixes;

	/** The limit's algorithm as a bit of a set. */
	final int algorithm;

	/** Whether its buckets are fields of a hash per slot rather than keys of their own. */
	final boolean hashed;

	/** A calendar quota's boundaries last sent, or {@code null} before the first call. */
	private volatile Boundaries boundaries;

	EncodedLimit(RateLimit limit, RedisKeyLayout layout) {
		AlgorithmSpec spec = AlgorithmSpec.of(limit.algorithm());
		this.hashed = layout == RedisKeyLayout.HASH_PER_SLOT && spec.redisHashable();
		this.limit = limit;
		this.algorithm = 1 << limit.algorithm().ordinal();
		this.code = (spec.redisCode() + (limit.shadow() ? "!" : "")).getBytes(StandardCharsets.UTF_8);
		this.capacity = ScriptArguments.ascii(limit.capacity());
		this.parameter = ScriptArguments.ascii(spec.redisParameter(limit));
		this.keyEnd = BucketKeys.keyEnd(limit.id(), this.hashed);
		this.keySuffixes = spec.redisKeySuffixes()
			.stream()
			.map((suffix) -> suffix.getBytes(StandardCharsets.UTF_8))
			.toArray(byte[][]::new);
	}

	/**
	 * The parameter the script receives: the same for every call, except for a calendar
	 * quota, whose window boundaries around the application's present it is.
	 */
	byte[] parameter(RateLimitClock applicationClock) {
		if (!this.limit.isCalendar()) {
			return this.parameter;
		}
		long now = applicationClock.nowMicros();
		Boundaries sent = this.boundaries;
		if (sent == null || now < sent.micros[1] || now >= sent.micros[2]) {
			long[] micros = CalendarWindows.boundariesAround(this.limit.calendar(), this.limit.timeZone(), now);
			StringBuilder text = new StringBuilder(68);
			for (long boundary : micros) {
				text.append((text.length() > 0) ? " " : "").append(boundary);
			}
			sent = new Boundaries(micros, ScriptArguments.ascii(text.toString()));
			this.boundaries = sent;
		}
		return sent.encoded;
	}

	/**
	 * Length of the window a decision at {@code decidedAt} was taken in, whose end is
	 * {@code resetMicros} later: for a calendar quota the window before that boundary.
	 */
	long windowMicros(long decidedAt, long resetMicros) {
		if (!this.limit.isCalendar()) {
			return this.limit.quotaWindowMicros();
		}
		long end = decidedAt + resetMicros;
		Boundaries sent = this.boundaries;
		if (sent != null) {
			for (int i = 1; i < sent.micros.length; i++) {
				if (sent.micros[i] == end) {
					return end - sent.micros[i - 1];
				}
			}
		}
		return end - CalendarWindows.startMicros(this.limit.calendar(), this.limit.timeZone(), end - 1);
	}

	/** The key of this limit's bucket for an identity, see {@link BucketKeys#key}. */
	byte[] key(byte[] prefix, String identity) {
		return BucketKeys.key(prefix, identity, this.hashed, this.keyEnd);
	}

	/** Window boundaries of a calendar quota, in microseconds and as the script receives them. */
	private record Boundaries(long[] micros, byte[] encoded) {
	}

}
