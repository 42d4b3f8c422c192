package io.github.ratelimit.internal.redis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import org.springframework.data.redis.connection.DataType;
import org.springframework.data.redis.core.Cursor;
import org.springframework.data.redis.core.RedisCallback;
import org.springframework.data.redis.core.ScanOptions;
import org.springframework.data.redis.core.script.RedisScript;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatException;

/**
 * Each Lua script on its own against a real Redis, at explicit times: the exact reply
 * (remaining, reset, retry-after, delay), the state it leaves and the TTL of every key
 * after every step; then the composed script deciding several limits in one call.
 * <p>
 * Times passed to the scripts are synthetic, TTLs are real: the limits here use periods
 * of a minute so that no key expires while a test runs, and a TTL is expected within
 * {@link #SLACK_MILLIS} below the value the step should have set.
 */
class LuaScriptsTest {

	@RegisterExtension
	static final SharedRedisConnection redisConnection = new SharedRedisConnection();

	/** 2024-01-01T00:00:00Z: the start of a minute, an hour and a day. */
	private static final long T0 = 1_704_067_200_000_000L;

	private static final long SECOND = 1_000_000;

	private static final long MINUTE = 60 * SECOND;

	/** Real time a test may take between the write that set a TTL and its check. */
	private static final long SLACK_MILLIS = 5_000;

	private static final String KEY = "lua:{alice}:limit";

	private static final String SUM = KEY + ":sum";

	@SuppressWarnings("rawtypes")
	private static final RedisScript<List> TOKEN_BUCKET = RedisScripts.standalone("token_bucket.lua");

	private static final RedisScript<List> LEAKY_BUCKET = RedisScripts.standalone("leaky_bucket.lua");

	@SuppressWarnings("rawtypes")
	private static final RedisScript<List> FIXED_WINDOW = RedisScripts.standalone("fixed_window.lua");

	@SuppressWarnings("rawtypes")
	private static final RedisScript<List> SLIDING_WINDOW_LOG = RedisScripts.standalone("sliding_window_log.lua");

	@SuppressWarnings("rawtypes")
	private static final RedisScript<List> SLIDING_WINDOW_COUNTER = RedisScripts
		.standalone("sliding_window_counter.lua");

	@SuppressWarnings("rawtypes")
	private static final RedisScript<List> ACQUIRE = RedisScripts.acquire();

	@SuppressWarnings("rawtypes")
	private static final RedisScript<List> INSPECT = RedisScripts.inspect();

	@BeforeEach
	void flush() {
		RedisTestServer.shared().flushAll();
	}

	// token_bucket.lua: C = 4, one token every 30s (2 per minute)

	@Test
	void tokenBucketStartsFullAndRefillsOneTokenPerInterval() {
		long c = 4;
		long t = 30 * SECOND;
		assertThat(tokenBucket(T0, c, t, 1)).isEqualTo(allowed(3, 30 * SECOND));
		assertThat(RedisValues.value(redisConnection.template(), KEY)).isEqualTo((T0 + 30 * SECOND) + ":" + t);
		assertKeysExpireWithin(Map.of(KEY, 30_000L));
		assertThat(tokenBucket(T0, c, t, 2)).isEqualTo(allowed(1, 30 * SECOND));
		assertKeysExpireWithin(Map.of(KEY, 90_000L));
		assertThat(tokenBucket(T0, c, t, 2)).isEqualTo(rejected(1, 30 * SECOND, 30 * SECOND));
		assertThat(RedisValues.value(redisConnection.template(), KEY)).isEqualTo((T0 + 90 * SECOND) + ":" + t);
		assertKeysExpireWithin(Map.of(KEY, 90_000L));
		// 10s later a third of a token has come back: the last whole one is 20s away
		assertThat(tokenBucket(T0 + 10 * SECOND, c, t, 1)).isEqualTo(allowed(0, 20 * SECOND));
		assertKeysExpireWithin(Map.of(KEY, 110_000L));
		assertThat(tokenBucket(T0 + 10 * SECOND, c, t, 1)).isEqualTo(rejected(0, 20 * SECOND, 20 * SECOND));
		assertThat(tokenBucket(T0 + 30 * SECOND - 1, c, t, 1)).isEqualTo(rejected(0, 1, 1));
		assertKeysExpireWithin(Map.of(KEY, 110_000L));
		assertThat(tokenBucket(T0 + 30 * SECOND, c, t, 1)).isEqualTo(allowed(0, 30 * SECOND));
		assertKeysExpireWithin(Map.of(KEY, 120_000L));
		// 75s later two and a half tokens are back
		assertThat(tokenBucket(T0 + 105 * SECOND, c, t, 3)).isEqualTo(rejected(2, 15 * SECOND, 15 * SECOND));
		assertThat(tokenBucket(T0 + 105 * SECOND, c, t, 2)).isEqualTo(allowed(0, 15 * SECOND));
		assertThat(RedisValues.value(redisConnection.template(), KEY)).isEqualTo((T0 + 210 * SECOND) + ":" + t);
		assertKeysExpireWithin(Map.of(KEY, 105_000L));
		// a debt that is not whole milliseconds: the TTL rounds up
		assertThat(tokenBucket(T0 + 135 * SECOND + 250, c, t, 1)).isEqualTo(allowed(0, 15 * SECOND - 250));
		assertKeysExpireWithin(Map.of(KEY, 105_000L));
		// idle for an hour: full again, whatever the stale value says
		assertThat(tokenBucket(T0 + 60 * MINUTE, c, t, 4)).isEqualTo(allowed(0, 30 * SECOND));
		assertKeysExpireWithin(Map.of(KEY, 120_000L));
	}

	@Test
	void tokenBucketOverdrawnByALoweredCapacityWaitsForItsDebtAboveTheNewBurst() {
		long t = 30 * SECOND;
		assertThat(tokenBucket(T0, 4, t, 4)).isEqualTo(allowed(0, 30 * SECOND));
		// 120s of debt against a burst of 60s: 60s to drain down to it, 30s more for a token
		assertThat(tokenBucket(T0, 2, t, 1)).isEqualTo(rejected(0, 90 * SECOND, 90 * SECOND));
		assertThat(tokenBucket(T0 + 90 * SECOND - 1, 2, t, 1)).isEqualTo(rejected(0, 1, 1));
		assertThat(tokenBucket(T0 + 90 * SECOND, 2, t, 1)).isEqualTo(allowed(0, 30 * SECOND));
		assertKeysExpireWithin(Map.of(KEY, 60_000L));
	}

	@Test
	void tokenBucketRefundGivesTheTokensBackAndKeepsTheTtl() {
		long c = 4;
		long t = 30 * SECOND;
		assertThat(tokenBucket(T0, c, t, 3)).isEqualTo(allowed(1, 30 * SECOND));
		assertKeysExpireWithin(Map.of(KEY, 90_000L));
		assertThat(refund(TOKEN_BUCKET, List.of(KEY), T0, c, t, 2)).containsExactly(T0);
		assertThat(RedisValues.value(redisConnection.template(), KEY)).isEqualTo((T0 + 30 * SECOND) + ":" + t);
		// KEEPTTL: at most what the refunded acquisition needed, never persistent
		assertKeysExpireWithin(Map.of(KEY, 90_000L));
		assertThat(tokenBucket(T0 + SECOND, c, t, 1)).isEqualTo(allowed(2, 29 * SECOND));
		assertKeysExpireWithin(Map.of(KEY, 59_000L));
	}

	@Test
	void tokenBucketRefundOfAnUnknownBucketWritesNothing() {
		assertThat(refund(TOKEN_BUCKET, List.of(KEY), T0, 4, 30 * SECOND, 2)).containsExactly(T0);
		assertKeysExpireWithin(Map.of());
	}

	// leaky_bucket.lua: a queue of 3 drained every 10s

	@Test
	void leakyBucketDelaysEachRequestToItsDrainSlot() {
		long c = 3;
		long t = 10 * SECOND;
		assertThat(leakyBucket(T0, c, t, 1)).isEqualTo(allowed(2, 10 * SECOND, 0));
		assertKeysExpireWithin(Map.of(KEY, 10_000L));
		assertThat(leakyBucket(T0, c, t, 1)).isEqualTo(allowed(1, 10 * SECOND, 10 * SECOND));
		assertKeysExpireWithin(Map.of(KEY, 20_000L));
		assertThat(leakyBucket(T0 + 5 * SECOND, c, t, 1)).isEqualTo(allowed(0, 5 * SECOND, 15 * SECOND));
		assertKeysExpireWithin(Map.of(KEY, 25_000L));
		// a full queue rejects, and a rejected request is not delayed
		assertThat(leakyBucket(T0 + 5 * SECOND, c, t, 1)).isEqualTo(rejected(0, 5 * SECOND, 5 * SECOND));
		assertKeysExpireWithin(Map.of(KEY, 25_000L));
		// the longest wait: behind C - 1 queued requests
		assertThat(leakyBucket(T0 + 10 * SECOND, c, t, 1)).isEqualTo(allowed(0, 10 * SECOND, 20 * SECOND));
		assertThat(RedisValues.value(redisConnection.template(), KEY)).isEqualTo((T0 + 40 * SECOND) + ":" + t);
		assertKeysExpireWithin(Map.of(KEY, 30_000L));
		// drained exactly: a request of cost 2 goes at once and takes two places
		assertThat(leakyBucket(T0 + 40 * SECOND, c, t, 2)).isEqualTo(allowed(1, 10 * SECOND, 0));
		assertKeysExpireWithin(Map.of(KEY, 20_000L));
		assertThat(leakyBucket(T0 + 40 * SECOND, c, t, 2)).isEqualTo(rejected(1, 10 * SECOND, 10 * SECOND));
		assertThat(leakyBucket(T0 + 40 * SECOND, c, t, 1)).isEqualTo(allowed(0, 10 * SECOND, 20 * SECOND));
		assertKeysExpireWithin(Map.of(KEY, 30_000L));
	}

	@Test
	void bucketsReserveSlotsWithinTheLongestWaitAndKeepTheirKeyUntilTheLast() {
		long t = 30 * SECOND;
		// token bucket of one: the next slots are 30s and 60s away, the one after is too far
		assertThat(decide(TOKEN_BUCKET, List.of(KEY), T0, 1, t, 1, 0, 60 * SECOND)).isEqualTo(allowed(0, t));
		assertThat(decide(TOKEN_BUCKET, List.of(KEY), T0, 1, t, 1, 0, 60 * SECOND))
			.isEqualTo(new Decision(true, 0, 60 * SECOND, 0, 30 * SECOND));
		assertThat(decide(TOKEN_BUCKET, List.of(KEY), T0, 1, t, 1, 0, 60 * SECOND))
			.isEqualTo(new Decision(true, 0, 90 * SECOND, 0, 60 * SECOND));
		assertKeysExpireWithin(Map.of(KEY, 90_000L));
		assertThat(decide(TOKEN_BUCKET, List.of(KEY), T0, 1, t, 1, 0, 60 * SECOND))
			.isEqualTo(rejected(0, 90 * SECOND, 90 * SECOND));
		assertThat(RedisValues.value(redisConnection.template(), KEY)).isEqualTo((T0 + 90 * SECOND) + ":" + t);
		// leaky bucket with a queue of one: the drain slot after the queue is 30s away
		RedisTestServer.shared().flushAll();
		assertThat(decide(LEAKY_BUCKET, List.of(KEY), T0, 1, t, 1, 30 * SECOND)).isEqualTo(allowed(0, t, 0));
		assertThat(decide(LEAKY_BUCKET, List.of(KEY), T0, 1, t, 1, 30 * SECOND))
			.isEqualTo(new Decision(true, 0, 60 * SECOND, 0, 30 * SECOND));
		assertThat(decide(LEAKY_BUCKET, List.of(KEY), T0, 1, t, 1, 30 * SECOND))
			.isEqualTo(rejected(0, 60 * SECOND, 60 * SECOND));
		assertKeysExpireWithin(Map.of(KEY, 60_000L));
	}

	@Test
	void acquireReservesWithTheLongestWaitAfterTheLimitsAndKeepsTheDefaultTtl() {
		List<String> limits = List.of("tb", "1", Long.toString(MINUTE), "1", "fw", "5", Long.toString(MINUTE), "1");
		List<String> keys = List.of(key("tb"), key("fw"));
		List<String> reserving = new ArrayList<>(limits);
		reserving.addAll(List.of("", Long.toString(2 * MINUTE)));
		assertThat(allowedFlags(acquire(T0, "acquire", reserving, keys))).containsExactly(1L, 1L);
		List<Object> reserved = acquire(T0, "acquire", reserving, keys);
		assertThat(decisions(reserved)).containsExactly(new Decision(true, 0, 2 * MINUTE, 0, MINUTE),
				allowed(3, MINUTE));
		assertKeysExpireWithin(Map.of(key("tb"), 120_000L, key("fw"), 60_000L));
		// without the longest wait the same request is rejected
		assertThat(allowedFlags(acquire(T0, "acquire", limits, keys))).containsExactly(0L, 1L);
	}

	@Test
	void leakyBucketRefundFreesQueuePlaces() {
		long c = 3;
		long t = 10 * SECOND;
		assertThat(leakyBucket(T0, c, t, 3)).isEqualTo(allowed(0, 10 * SECOND, 0));
		assertThat(refund(TOKEN_BUCKET, List.of(KEY), T0, c, t, 1)).containsExactly(T0);
		assertKeysExpireWithin(Map.of(KEY, 30_000L));
		assertThat(leakyBucket(T0, c, t, 1)).isEqualTo(allowed(0, 10 * SECOND, 20 * SECOND));
		assertKeysExpireWithin(Map.of(KEY, 30_000L));
	}

	// fixed_window.lua: 3 per minute

	@Test
	void fixedWindowCountsPerEpochAlignedWindowAndExpiresWithIt() {
		long c = 3;
		assertThat(fixedWindow(T0 + 10 * SECOND, c, MINUTE, 1)).isEqualTo(allowed(2, 50 * SECOND));
		assertThat(redisConnection.template().opsForValue().get(KEY)).isEqualTo(T0 + " 1");
		assertKeysExpireWithin(Map.of(KEY, 50_000L));
		assertThat(fixedWindow(T0 + 20 * SECOND, c, MINUTE, 2)).isEqualTo(allowed(0, 40 * SECOND));
		assertThat(redisConnection.template().opsForValue().get(KEY)).isEqualTo(T0 + " 3");
		assertKeysExpireWithin(Map.of(KEY, 40_000L));
		assertThat(fixedWindow(T0 + 30 * SECOND, c, MINUTE, 1)).isEqualTo(rejected(0, 30 * SECOND, 30 * SECOND));
		assertThat(fixedWindow(T0 + MINUTE - 1, c, MINUTE, 1)).isEqualTo(rejected(0, 1, 1));
		assertThat(redisConnection.template().opsForValue().get(KEY)).isEqualTo(T0 + " 3");
		assertKeysExpireWithin(Map.of(KEY, 40_000L));
		// the boundary: a whole new window
		assertThat(fixedWindow(T0 + MINUTE, c, MINUTE, 3)).isEqualTo(allowed(0, MINUTE));
		assertThat(RedisValues.value(redisConnection.template(), KEY)).isEqualTo((T0 + MINUTE) + " 3");
		assertKeysExpireWithin(Map.of(KEY, 60_000L));
		assertThat(fixedWindow(T0 + MINUTE + 1, c, MINUTE, 1)).isEqualTo(rejected(0, MINUTE - 1, MINUTE - 1));
		// four windows later, 250µs in: the TTL rounds the time to the window end up
		long later = T0 + 5 * MINUTE + 250;
		assertThat(fixedWindow(later, c, MINUTE, 2)).isEqualTo(allowed(1, MINUTE - 250));
		assertKeysExpireWithin(Map.of(KEY, 60_000L));
		assertThat(fixedWindow(later, c, MINUTE, 2)).isEqualTo(rejected(1, MINUTE - 250, MINUTE - 250));
		assertThat(fixedWindow(later, c, MINUTE, 1)).isEqualTo(allowed(0, MINUTE - 250));
		assertThat(RedisValues.value(redisConnection.template(), KEY)).isEqualTo((T0 + 5 * MINUTE) + " 3");
	}

	@Test
	void fixedWindowRefundGivesBackOnlyWithinItsWindow() {
		long c = 3;
		assertThat(fixedWindow(T0 + 10 * SECOND, c, MINUTE, 2)).isEqualTo(allowed(1, 50 * SECOND));
		assertThat(refund(FIXED_WINDOW, List.of(KEY), T0 + 10 * SECOND, c, MINUTE, 1)).containsExactly(T0 + 10 * SECOND);
		assertThat(redisConnection.template().opsForValue().get(KEY)).isEqualTo(T0 + " 1");
		assertKeysExpireWithin(Map.of(KEY, 50_000L));
		// an acquisition of the previous window is not this window's to give back
		refund(FIXED_WINDOW, List.of(KEY), T0 - SECOND, c, MINUTE, 1);
		assertThat(redisConnection.template().opsForValue().get(KEY)).isEqualTo(T0 + " 1");
		assertThat(fixedWindow(T0 + 20 * SECOND, c, MINUTE, 2)).isEqualTo(allowed(0, 40 * SECOND));
		assertThat(fixedWindow(T0 + MINUTE + 10 * SECOND, c, MINUTE, 1)).isEqualTo(allowed(2, 50 * SECOND));
		refund(FIXED_WINDOW, List.of(KEY), T0 + 20 * SECOND, c, MINUTE, 2);
		assertThat(RedisValues.value(redisConnection.template(), KEY)).isEqualTo((T0 + MINUTE) + " 1");
		refund(FIXED_WINDOW, List.of(KEY), T0 + MINUTE + 10 * SECOND, c, MINUTE, 5);
		assertThat(RedisValues.value(redisConnection.template(), KEY)).isEqualTo((T0 + MINUTE) + " 0");
		assertKeysExpireWithin(Map.of(KEY, 50_000L));
	}

	// fixed_window.lua for a calendar quota: the application passes the window boundaries
	// around its present (here days of 23, 24 and 25 hours), the script counts in the one
	// containing its time

	@Test
	void calendarQuotaCountsInThePassedWindowThatContainsTheScriptsTime() {
		long day = 24 * 60 * MINUTE;
		String boundaries = calendarBoundaries(T0, T0 + day - 60 * MINUTE, T0 + 2 * day - 60 * MINUTE,
				T0 + 3 * day);
		long current = T0 + day - 60 * MINUTE;
		// ten minutes into the current (24-hour) window
		assertThat(calendarWindow(current + 10 * MINUTE, 3, boundaries, 2))
			.isEqualTo(allowed(1, day - 10 * MINUTE));
		assertThat(redisConnection.template().opsForValue().get(KEY)).isEqualTo(current + " 2");
		assertKeysExpireWithin(Map.of(KEY, (day - 10 * MINUTE) / 1_000));
		assertThat(calendarWindow(current + 20 * MINUTE, 3, boundaries, 2))
			.isEqualTo(rejected(1, day - 20 * MINUTE, day - 20 * MINUTE));
		// a time still in the previous (23-hour) window, as when Redis's clock is behind the
		// application's at midnight: that window's own count
		assertThat(calendarWindow(current - MINUTE, 3, boundaries, 3)).isEqualTo(allowed(0, MINUTE));
		assertThat(redisConnection.template().opsForValue().get(KEY)).isEqualTo(T0 + " 3");
		// a time in the next (25-hour) window, as when Redis's clock is ahead: a new window
		long next = T0 + 2 * day - 60 * MINUTE;
		assertThat(calendarWindow(next + MINUTE, 3, boundaries, 1)).isEqualTo(allowed(2, 25 * 60 * MINUTE - MINUTE));
		assertThat(redisConnection.template().opsForValue().get(KEY)).isEqualTo(next + " 1");
	}

	@Test
	void calendarQuotaFailsWhenTheScriptsTimeIsOutsideThePassedWindows() {
		long day = 24 * 60 * MINUTE;
		String boundaries = calendarBoundaries(T0, T0 + day, T0 + 2 * day, T0 + 3 * day);
		assertThat(calendarWindow(T0 + day, 3, boundaries, 1)).isEqualTo(allowed(2, day));
		for (long outside : new long[] { T0 - 1, T0 + 3 * day }) {
			assertThatException().isThrownBy(() -> calendarWindow(outside, 3, boundaries, 1))
				.satisfies((ex) -> assertThat(messages(ex)).contains("outside the windows the application sent"));
		}
		assertThat(redisConnection.template().opsForValue().get(KEY)).isEqualTo((T0 + day) + " 1");
		// a refund of an acquisition outside them gives nothing back, and fails nothing
		redisConnection.template().execute(FIXED_WINDOW, List.of(KEY), Long.toString(T0 + 3 * day), "refund", "3",
				boundaries, "1");
		assertThat(redisConnection.template().opsForValue().get(KEY)).isEqualTo((T0 + day) + " 1");
		redisConnection.template().execute(FIXED_WINDOW, List.of(KEY), Long.toString(T0 + day), "refund", "3",
				boundaries, "1");
		assertThat(redisConnection.template().opsForValue().get(KEY)).isEqualTo((T0 + day) + " 0");
	}

	@Test
	void acquireDecidesACalendarQuotaBesideOtherLimits() {
		long day = 24 * 60 * MINUTE;
		String boundaries = calendarBoundaries(T0 - day, T0, T0 + day, T0 + 2 * day);
		List<Object> reply = acquire(T0 + MINUTE, "acquire",
				List.of("tb", "5", Long.toString(12 * SECOND), "1", "fw", "2", boundaries, "2"),
				List.of(key("tb"), key("fw")));
		assertThat(decisions(reply)).containsExactly(new Decision(true, 4, 12 * SECOND, 0, 0),
				new Decision(true, 0, day - MINUTE, 0, 0));
		reply = acquire(T0 + 2 * MINUTE, "acquire",
				List.of("tb", "5", Long.toString(12 * SECOND), "1", "fw", "2", boundaries, "1"),
				List.of(key("tb"), key("fw")));
		assertThat(decisions(reply)).extracting(Decision::allowed).containsExactly(true, false);
		assertThat(decisions(reply).get(1).retryAfter()).isEqualTo(day - 2 * MINUTE);
	}

	// sliding_window_log.lua: 3 in any minute

	@Test
	void slidingWindowLogCountsTheLastPeriodExactlyAndLogsOnlyAdmittedRequests() {
		long c = 3;
		assertThat(slidingWindowLog(T0, c, MINUTE, 1)).isEqualTo(allowed(2, MINUTE));
		assertThat(redisConnection.template().opsForZSet().zCard(KEY)).isEqualTo(1);
		assertThat(redisConnection.template().opsForValue().get(SUM)).isEqualTo("1");
		assertKeysExpireWithin(Map.of(KEY, 60_000L, SUM, 60_000L));
		assertThat(slidingWindowLog(T0 + 10 * SECOND, c, MINUTE, 1)).isEqualTo(allowed(1, 50 * SECOND));
		assertThat(slidingWindowLog(T0 + 20 * SECOND, c, MINUTE, 1)).isEqualTo(allowed(0, 40 * SECOND));
		assertKeysExpireWithin(Map.of(KEY, 60_000L, SUM, 60_000L));
		// reset: until the oldest entry leaves; retry-after for 2: until the second one leaves
		assertThat(slidingWindowLog(T0 + 30 * SECOND, c, MINUTE, 1)).isEqualTo(rejected(0, 30 * SECOND, 30 * SECOND));
		assertThat(slidingWindowLog(T0 + 30 * SECOND, c, MINUTE, 2)).isEqualTo(rejected(0, 30 * SECOND, 40 * SECOND));
		assertThat(slidingWindowLog(T0 + MINUTE - 1, c, MINUTE, 1)).isEqualTo(rejected(0, 1, 1));
		assertThat(log()).containsExactly(T0, T0 + 10 * SECOND, T0 + 20 * SECOND);
		assertThat(redisConnection.template().opsForValue().get(SUM)).isEqualTo("3");
		assertKeysExpireWithin(Map.of(KEY, 60_000L, SUM, 60_000L));
		// exactly one period later the first entry no longer counts
		assertThat(slidingWindowLog(T0 + MINUTE, c, MINUTE, 1)).isEqualTo(allowed(0, 10 * SECOND));
		assertThat(log()).containsExactly(T0 + 10 * SECOND, T0 + 20 * SECOND, T0 + MINUTE);
		assertKeysExpireWithin(Map.of(KEY, 60_000L, SUM, 60_000L));
		// a rejection that expires an entry updates the sum and keeps the TTLs
		assertThat(slidingWindowLog(T0 + 70 * SECOND, c, MINUTE, 2)).isEqualTo(rejected(1, 10 * SECOND, 10 * SECOND));
		assertThat(log()).containsExactly(T0 + 20 * SECOND, T0 + MINUTE);
		assertThat(redisConnection.template().opsForValue().get(SUM)).isEqualTo("2");
		assertKeysExpireWithin(Map.of(KEY, 60_000L, SUM, 60_000L));
		assertThat(slidingWindowLog(T0 + 80 * SECOND, c, MINUTE, 2)).isEqualTo(allowed(0, 40 * SECOND));
		assertThat(log()).containsExactly(T0 + MINUTE, T0 + 80 * SECOND);
		assertThat(redisConnection.template().opsForValue().get(SUM)).isEqualTo("3");
		// idle for an hour: everything stale is dropped at once
		assertThat(slidingWindowLog(T0 + 60 * MINUTE + 250, c, MINUTE, 3)).isEqualTo(allowed(0, MINUTE));
		assertThat(log()).containsExactly(T0 + 60 * MINUTE + 250);
		assertKeysExpireWithin(Map.of(KEY, 60_000L, SUM, 60_000L));
	}

	@Test
	void slidingWindowLogRefundRemovesTheEntryAndKeepsTheTtls() {
		long c = 3;
		assertThat(slidingWindowLog(T0, c, MINUTE, 1)).isEqualTo(allowed(2, MINUTE));
		assertThat(slidingWindowLog(T0 + 10 * SECOND, c, MINUTE, 2)).isEqualTo(allowed(0, 50 * SECOND));
		// a refund names the acquisition by time and cost
		refund(SLIDING_WINDOW_LOG, List.of(KEY, SUM), T0 + 10 * SECOND, c, MINUTE, 1);
		assertThat(log()).hasSize(2);
		refund(SLIDING_WINDOW_LOG, List.of(KEY, SUM), T0 + 10 * SECOND, c, MINUTE, 2);
		assertThat(log()).containsExactly(T0);
		assertThat(redisConnection.template().opsForValue().get(SUM)).isEqualTo("1");
		assertKeysExpireWithin(Map.of(KEY, 60_000L, SUM, 60_000L));
		assertThat(slidingWindowLog(T0 + 20 * SECOND, c, MINUTE, 2)).isEqualTo(allowed(0, 40 * SECOND));
		refund(SLIDING_WINDOW_LOG, List.of(KEY, SUM), T0, c, MINUTE, 1);
		refund(SLIDING_WINDOW_LOG, List.of(KEY, SUM), T0 + 20 * SECOND, c, MINUTE, 2);
		// the log is gone with its last entry; the sum says 0 until it expires
		assertThat(redisConnection.template().opsForValue().get(SUM)).isEqualTo("0");
		assertKeysExpireWithin(Map.of(SUM, 60_000L));
		assertThat(slidingWindowLog(T0 + 30 * SECOND, c, MINUTE, 3)).isEqualTo(allowed(0, MINUTE));
	}

	@Test
	void slidingWindowLogKeepsEveryEntryOfOneInstantThroughRefunds() {
		long c = 20;
		for (int i = 1; i <= 10; i++) {
			assertThat(slidingWindowLog(T0, c, MINUTE, 1)).isEqualTo(allowed(c - i, MINUTE));
		}
		refund(SLIDING_WINDOW_LOG, List.of(KEY, SUM), T0, c, MINUTE, 1);
		assertThat(slidingWindowLog(T0, c, MINUTE, 1)).isEqualTo(allowed(10, MINUTE));
		assertThat(log()).hasSize(10);
		assertThat(redisConnection.template().opsForValue().get(SUM)).isEqualTo("10");
		// a period later all ten have left: nothing counts any more
		assertThat(slidingWindowLog(T0 + MINUTE, c, MINUTE, c)).isEqualTo(allowed(0, MINUTE));
		assertKeysExpireWithin(Map.of(KEY, 60_000L, SUM, 60_000L));
	}

	@Test
	void slidingWindowLogRecountsALostSumAndNeverLeavesItWithoutATtl() {
		long c = 3;
		assertThat(slidingWindowLog(T0, c, MINUTE, 2)).isEqualTo(allowed(1, MINUTE));
		assertThat(slidingWindowLog(T0 + 30 * SECOND, c, MINUTE, 1)).isEqualTo(allowed(0, 30 * SECOND));
		// evicted under memory pressure, say
		redisConnection.template().delete(SUM);
		assertThat(slidingWindowLog(T0 + 40 * SECOND, c, MINUTE, 1)).isEqualTo(rejected(0, 20 * SECOND, 20 * SECOND));
		assertKeysExpireWithin(Map.of(KEY, 60_000L));
		// a rejection that expires entries writes the sum back, expiring with the log
		assertThat(slidingWindowLog(T0 + MINUTE, c, MINUTE, 3)).isEqualTo(rejected(2, 30 * SECOND, 30 * SECOND));
		assertThat(redisConnection.template().opsForValue().get(SUM)).isEqualTo("1");
		assertKeysExpireWithin(Map.of(KEY, 60_000L, SUM, 60_000L));
		// read one after the other, so the second read may be a few milliseconds lower
		long keyTtl = redisConnection.template().getExpire(KEY, TimeUnit.MILLISECONDS);
		assertThat(redisConnection.template().getExpire(SUM, TimeUnit.MILLISECONDS)).isLessThanOrEqualTo(keyTtl);
		// a refund without a sum leaves the count to the log
		redisConnection.template().delete(SUM);
		refund(SLIDING_WINDOW_LOG, List.of(KEY, SUM), T0 + 30 * SECOND, c, MINUTE, 1);
		assertKeysExpireWithin(Map.of());
		assertThat(slidingWindowLog(T0 + MINUTE, c, MINUTE, 3)).isEqualTo(allowed(0, MINUTE));
		assertKeysExpireWithin(Map.of(KEY, 60_000L, SUM, 60_000L));
	}

	// sliding_window_counter.lua: 10 per minute, the previous minute weighing what is left of it

	@Test
	void slidingWindowCounterWeighsThePreviousWindowAndExpiresAfterTheNext() {
		long c = 10;
		// the 4 weigh 3 or less a quarter into the next window
		assertThat(slidingWindowCounter(T0 + 30 * SECOND, c, MINUTE, 4)).isEqualTo(allowed(6, 45 * SECOND));
		assertThat(redisConnection.template().opsForValue().get(KEY)).isEqualTo(T0 + " 4 0");
		assertKeysExpireWithin(Map.of(KEY, 90_000L));
		assertThat(slidingWindowCounter(T0 + 45 * SECOND, c, MINUTE, 6)).isEqualTo(allowed(0, 21 * SECOND));
		assertThat(redisConnection.template().opsForValue().get(KEY)).isEqualTo(T0 + " 10 0");
		assertKeysExpireWithin(Map.of(KEY, 75_000L));
		assertThat(slidingWindowCounter(T0 + 50 * SECOND, c, MINUTE, 1)).isEqualTo(rejected(0, 16 * SECOND, 16 * SECOND));
		assertKeysExpireWithin(Map.of(KEY, 75_000L));
		// 6s into the next window the previous 10 weigh 9: exactly room for one
		assertThat(slidingWindowCounter(T0 + 66 * SECOND, c, MINUTE, 1)).isEqualTo(allowed(0, 6 * SECOND));
		assertThat(RedisValues.value(redisConnection.template(), KEY)).isEqualTo((T0 + MINUTE) + " 1 10");
		assertKeysExpireWithin(Map.of(KEY, 114_000L));
		assertThat(slidingWindowCounter(T0 + 66 * SECOND, c, MINUTE, 1)).isEqualTo(rejected(0, 6 * SECOND, 6 * SECOND));
		assertThat(slidingWindowCounter(T0 + 66 * SECOND, c, MINUTE, 5)).isEqualTo(rejected(0, 6 * SECOND, 30 * SECOND));
		// a whole quota must wait for the end of the window after this one
		assertThat(slidingWindowCounter(T0 + 66 * SECOND, c, MINUTE, 10))
			.isEqualTo(rejected(0, 6 * SECOND, 114 * SECOND));
		assertThat(slidingWindowCounter(T0 + 72 * SECOND - 1, c, MINUTE, 1)).isEqualTo(rejected(0, 1, 1));
		assertThat(slidingWindowCounter(T0 + 72 * SECOND, c, MINUTE, 1)).isEqualTo(allowed(0, 6 * SECOND));
		assertThat(RedisValues.value(redisConnection.template(), KEY)).isEqualTo((T0 + MINUTE) + " 2 10");
		assertKeysExpireWithin(Map.of(KEY, 108_000L));
		// the next window: this one becomes the previous
		assertThat(slidingWindowCounter(T0 + 130 * SECOND, c, MINUTE, 1)).isEqualTo(allowed(7, 20 * SECOND));
		assertThat(RedisValues.value(redisConnection.template(), KEY)).isEqualTo((T0 + 2 * MINUTE) + " 1 2");
		assertKeysExpireWithin(Map.of(KEY, 110_000L));
		// two windows on nothing weighs any more
		assertThat(slidingWindowCounter(T0 + 4 * MINUTE + 30 * SECOND, c, MINUTE, 1)).isEqualTo(allowed(9, 90 * SECOND));
		assertThat(RedisValues.value(redisConnection.template(), KEY)).isEqualTo((T0 + 4 * MINUTE) + " 1 0");
		assertKeysExpireWithin(Map.of(KEY, 90_000L));
	}

	@Test
	void slidingWindowCounterRefundGivesBackToTheWindowOfTheAcquisition() {
		long c = 10;
		assertThat(slidingWindowCounter(T0 + 30 * SECOND, c, MINUTE, 4)).isEqualTo(allowed(6, 45 * SECOND));
		refund(SLIDING_WINDOW_COUNTER, List.of(KEY), T0 + 30 * SECOND, c, MINUTE, 3);
		assertThat(redisConnection.template().opsForValue().get(KEY)).isEqualTo(T0 + " 1 0");
		assertKeysExpireWithin(Map.of(KEY, 90_000L));
		// the previous 1 weighs 5/6: the eighth unit comes back when it has decayed entirely
		assertThat(slidingWindowCounter(T0 + 70 * SECOND, c, MINUTE, 2)).isEqualTo(allowed(7, 50 * SECOND));
		assertThat(RedisValues.value(redisConnection.template(), KEY)).isEqualTo((T0 + MINUTE) + " 2 1");
		// an acquisition of the previous window is given back to the previous count
		refund(SLIDING_WINDOW_COUNTER, List.of(KEY), T0 + 30 * SECOND, c, MINUTE, 1);
		assertThat(RedisValues.value(redisConnection.template(), KEY)).isEqualTo((T0 + MINUTE) + " 2 0");
		// and one two windows old to neither
		refund(SLIDING_WINDOW_COUNTER, List.of(KEY), T0 - SECOND, c, MINUTE, 1);
		assertThat(RedisValues.value(redisConnection.template(), KEY)).isEqualTo((T0 + MINUTE) + " 2 0");
		refund(SLIDING_WINDOW_COUNTER, List.of(KEY), T0 + 70 * SECOND, c, MINUTE, 2);
		assertThat(RedisValues.value(redisConnection.template(), KEY)).isEqualTo((T0 + MINUTE) + " 0 0");
		assertKeysExpireWithin(Map.of(KEY, 110_000L));
	}

	// acquire.lua: every limit of a request in one call

	@Test
	void acquireDecidesEveryAlgorithmInOneCallAndRepliesInOrder() {
		List<Object> reply = acquire(T0 + 10 * SECOND, "acquire", limits(5, 5, 5, 5, 5));
		assertThat(reply.get(0)).isEqualTo(T0 + 10 * SECOND);
		assertThat(decisions(reply)).containsExactly(
				// tb: 5 tokens, one every 12s
				allowed(4, 12 * SECOND),
				// fw: 5 per minute
				allowed(4, 50 * SECOND),
				// swl: 5 in any minute
				allowed(4, MINUTE),
				// swc: the one request weighs nothing at the end of the next window
				allowed(4, 110 * SECOND),
				// lb: a queue of 5 drained every 12s, empty: no delay
				allowed(4, 12 * SECOND));
		assertKeysExpireWithin(Map.of(key("tb"), 12_000L, key("fw"), 50_000L, key("swl"), 60_000L,
				key("swl") + ":sum", 60_000L, key("swc"), 110_000L, key("lb"), 12_000L));
		reply = acquire(T0 + 10 * SECOND, "acquire", limits(5, 5, 5, 5, 5));
		assertThat(decisions(reply).get(0)).isEqualTo(allowed(3, 12 * SECOND));
		assertThat(decisions(reply).get(4)).isEqualTo(allowed(3, 12 * SECOND, 12 * SECOND));
		assertKeysExpireWithin(Map.of(key("tb"), 24_000L, key("fw"), 50_000L, key("swl"), 60_000L,
				key("swl") + ":sum", 60_000L, key("swc"), 110_000L, key("lb"), 24_000L));
	}

	@ParameterizedTest
	@ValueSource(strings = { "tb", "fw", "swl", "swc", "lb" })
	void acquireRejectedByOneLimitChangesNoOtherKey(String narrow) {
		long[] capacities = { 5, 5, 5, 5, 5 };
		capacities[CODES.indexOf(narrow)] = 1;
		List<Object> first = acquire(T0 + 10 * SECOND, "acquire", limits(capacities));
		assertThat(allowedFlags(first)).containsOnly(1L);
		Map<String, Object> before = snapshot();
		assertThat(before).hasSize(6);
		List<Object> second = acquire(T0 + 20 * SECOND, "acquire", limits(capacities));
		List<Long> flags = allowedFlags(second);
		for (int i = 0; i < CODES.size(); i++) {
			assertThat(flags.get(i)).as(CODES.get(i)).isEqualTo(CODES.get(i).equals(narrow) ? 0L : 1L);
		}
		assertThat(snapshot()).isEqualTo(before);
		assertThat(scanKeys()).allSatisfy((key) -> assertThat(redisConnection.template().getExpire(key, TimeUnit.MILLISECONDS))
			.as("PTTL of %s", key)
			.isPositive());
	}

	@Test
	void acquireRejectedByTheLastLimitWritesNoKeyForTheFirstOnes() {
		redisConnection.template().opsForValue().set(key("fw"), T0 + " 1", Duration.ofMinutes(1));
		List<Object> reply = acquire(T0 + 10 * SECOND, "acquire",
				List.of("tb", "5", Long.toString(12 * SECOND), "1", "lb", "5", Long.toString(12 * SECOND), "1",
						"swl", "5", Long.toString(MINUTE), "1", "swc", "5", Long.toString(MINUTE), "1", "fw", "1",
						Long.toString(MINUTE), "1"));
		assertThat(allowedFlags(reply)).containsExactly(1L, 1L, 1L, 1L, 0L);
		assertThat(decisions(reply).get(4)).isEqualTo(rejected(0, 50 * SECOND, 50 * SECOND));
		assertThat(snapshot()).isEqualTo(Map.of(key("fw"), T0 + " 1"));
		assertKeysExpireWithin(Map.of(key("fw"), 60_000L));
	}

	@Test
	void checkDecidesWithoutChangingAnything() {
		acquire(T0 + 10 * SECOND, "acquire", limits(5, 5, 5, 5, 5));
		Map<String, Object> before = snapshot();
		List<Object> checked = acquire(T0 + 20 * SECOND, "check", limits(5, 5, 5, 5, 5));
		assertThat(allowedFlags(checked)).containsOnly(1L);
		assertThat(snapshot()).isEqualTo(before);
		List<Object> rejections = acquire(T0 + 20 * SECOND, "check", limits(1, 1, 1, 1, 1));
		assertThat(allowedFlags(rejections)).containsOnly(0L);
		assertThat(snapshot()).isEqualTo(before);
		// the check answered what the acquisition then does
		assertThat(acquire(T0 + 20 * SECOND, "acquire", limits(5, 5, 5, 5, 5))).isEqualTo(checked);
		assertThat(snapshot()).isNotEqualTo(before);
		// nor does a check of fresh limits create their keys
		RedisTestServer.shared().flushAll();
		acquire(T0, "check", limits(5, 5, 5, 5, 5));
		assertKeysExpireWithin(Map.of());
	}

	@Test
	void acquireRefundsEveryLimitOfTheRequest() {
		List<Object> admitted = acquire(T0 + 10 * SECOND, "acquire", limits(5, 5, 5, 5, 5));
		assertThat(allowedFlags(admitted)).containsOnly(1L);
		assertThat(acquire(T0 + 10 * SECOND, "refund", limits(5, 5, 5, 5, 5))).containsExactly(T0 + 10 * SECOND);
		// the same request is answered as if it had never been taken
		assertThat(acquire(T0 + 10 * SECOND, "acquire", limits(5, 5, 5, 5, 5))).isEqualTo(admitted);
		assertThat(scanKeys()).allSatisfy((key) -> assertThat(redisConnection.template().getExpire(key, TimeUnit.MILLISECONDS))
			.as("PTTL of %s", key)
			.isPositive());
	}

	@Test
	void acquireAnswersAnUnknownAlgorithmWithAnErrorAndConsumesNothing() {
		assertThatException()
			.isThrownBy(() -> acquire(T0, "acquire",
					List.of("tb", "5", Long.toString(12 * SECOND), "1", "gcra", "5", Long.toString(MINUTE), "1"),
					List.of(key("tb"), key("gcra"))))
			.satisfies((ex) -> assertThat(messages(ex)).contains("unknown algorithm gcra"));
		assertKeysExpireWithin(Map.of());
	}

	// deadlines: a call Redis runs after its caller stopped waiting for it

	@ParameterizedTest
	@ValueSource(strings = { "tb", "lb", "fw", "swl", "swc", "cc" })
	void aCallRunAfterItsDeadlineChangesNothingAndRepliesRedisTimeNegated(String code) {
		List<String> limit = List.of(code, "5", Long.toString(MINUTE), "1");
		List<Object> first = acquire(T0, "acquire", withOptions(limit, "", "0", Long.toString(redisMicros() + MINUTE)));
		assertThat(first.get(0)).isEqualTo(T0);
		assertThat(decisions(first)).singleElement().satisfies((decision) -> {
			assertThat(decision.allowed()).isTrue();
			assertThat(decision.remaining()).isEqualTo(4);
		});
		Map<String, Object> before = snapshot();
		assertThat(before).isNotEmpty();

		// a second ago on Redis's clock, whatever time the call decides at
		long sentAt = redisMicros();
		List<Object> late = acquire(T0, "acquire", withOptions(limit, "", "0", Long.toString(sentAt - SECOND)));
		assertThat(late).singleElement().satisfies((time) -> assertThat(-(Long) time).isBetween(sentAt, redisMicros()));
		assertThat(snapshot()).isEqualTo(before);
		// nor does a late call deciding at Redis time
		List<String> keys = code.equals("swl") ? List.of(key(code), key(code) + ":sum") : List.of(key(code));
		@SuppressWarnings("unchecked")
		List<Object> lateAtRedisTime = redisConnection.template()
			.execute(ACQUIRE, keys, "", "acquire", "1", code, "5", Long.toString(MINUTE), "1", "", "", "0",
					Long.toString(sentAt - SECOND));
		assertThat(lateAtRedisTime).singleElement().satisfies((time) -> assertThat((Long) time).isNegative());
		assertThat(snapshot()).isEqualTo(before);

		// the next call finds what the first one left: the late ones took nothing
		List<Object> next = acquire(T0, "acquire", withOptions(limit, "", "0", Long.toString(redisMicros() + MINUTE)));
		assertThat(decisions(next)).singleElement().satisfies((decision) -> assertThat(decision.remaining()).isEqualTo(3));
	}

	@ParameterizedTest
	@ValueSource(strings = { "tb", "fw", "swc" })
	void aLeaseRunAfterItsDeadlineTakesNothing(String code) {
		List<Object> late = lease(code, redisMicros() - SECOND);
		assertThat(late).singleElement().satisfies((time) -> assertThat((Long) time).isNegative());
		assertKeysExpireWithin(Map.of());
		List<Object> onTime = lease(code, redisMicros() + MINUTE);
		// the cost and four more taken: five of ten left
		assertThat(decisions(onTime.subList(0, 4))).singleElement()
			.satisfies((decision) -> assertThat(decision.remaining()).isEqualTo(5));
		assertThat(onTime.get(4)).isEqualTo(4L);
	}

	/** Leases a limit of capacity 10 at T0: its cost of 1 and 4 more, before a deadline. */
	@SuppressWarnings("unchecked")
	private List<Object> lease(String code, long deadline) {
		String param = Long.toString(code.equals("tb") ? MINUTE / 10 : MINUTE);
		return redisConnection.template()
			.execute(ACQUIRE, List.of(key(code)), Long.toString(T0), "lease", "1", code, "10", param, "1", "", "", "0",
					Long.toString(deadline), "4");
	}

	/** A limit's four values, then the driver's options: least TTL, longest delay, deadline, lease extras. */
	private static List<String> withOptions(List<String> limit, String... options) {
		List<String> args = new ArrayList<>(limit);
		args.addAll(List.of(options));
		return args;
	}

	/** Redis TIME in microseconds. */
	private static long redisMicros() {
		return redisConnection.template()
			.execute((RedisCallback<Long>) (connection) -> connection.serverCommands().time(TimeUnit.MICROSECONDS));
	}

	// helpers

	private static final List<String> CODES = List.of("tb", "fw", "swl", "swc", "lb");

	// inspect.lua: what a request of cost 1 would find, without writing

	@Test
	void inspectAnswersACheckOfCostOneAndWhetherEachBucketExistsWithoutWriting() {
		List<Object> fresh = inspect(T0 + 10 * SECOND, limits(5, 5, 5, 5, 5));
		assertThat(fresh.get(0)).isEqualTo(T0 + 10 * SECOND);
		assertThat(existsFlags(fresh)).containsOnly(0L);
		assertKeysExpireWithin(Map.of());
		acquire(T0 + 10 * SECOND, "acquire", limits(5, 5, 5, 5, 5));
		Map<String, Object> before = snapshot();
		List<Object> inspected = inspect(T0 + 20 * SECOND, limits(5, 5, 5, 5, 5));
		assertThat(snapshot()).isEqualTo(before);
		assertThat(existsFlags(inspected)).containsOnly(1L);
		// each limit answers as a check of cost 1 at the same time: allowed, remaining, reset, retry-after
		List<Object> checked = acquire(T0 + 20 * SECOND, "check", limits(5, 5, 5, 5, 5));
		List<Decision> decisions = decisions(checked);
		for (int i = 0; i < CODES.size(); i++) {
			Decision decision = decisions.get(i);
			assertThat(inspected.subList(2 + i * 5, 6 + i * 5)).as(CODES.get(i))
				.containsExactly(decision.allowed() ? 1L : 0L, decision.remaining(), decision.reset(),
						decision.retryAfter());
		}
	}

	@SuppressWarnings("unchecked")
	private List<Object> inspect(long now, List<String> limits) {
		List<String> keys = new ArrayList<>();
		List<String> args = new ArrayList<>(List.of(Long.toString(now), Integer.toString(limits.size() / 4)));
		for (int i = 0; i < limits.size(); i += 4) {
			keys.add(key(limits.get(i)));
			if (limits.get(i).equals("swl")) {
				keys.add(key(limits.get(i)) + ":sum");
			}
			// inspect takes no cost; every bucket is a key of its own
			args.addAll(limits.subList(i, i + 3));
			args.add("");
		}
		return redisConnection.template().execute(INSPECT, keys, args.toArray());
	}

	private static List<Long> existsFlags(List<Object> reply) {
		List<Long> flags = new ArrayList<>();
		for (int i = 1; i < reply.size(); i += 5) {
			flags.add((Long) reply.get(i));
		}
		return flags;
	}

	private static String key(String code) {
		return "lua:{alice}:" + code;
	}

	/** One limit of each algorithm, in {@link #CODES} order, cost 1, with these capacities. */
	private static List<String> limits(long... capacities) {
		List<String> args = new ArrayList<>();
		for (int i = 0; i < CODES.size(); i++) {
			String code = CODES.get(i);
			long param = (code.equals("tb") || code.equals("lb")) ? MINUTE / capacities[i] : MINUTE;
			args.addAll(List.of(code, Long.toString(capacities[i]), Long.toString(param), "1"));
		}
		return args;
	}

	private List<Object> acquire(long now, String mode, List<String> limits) {
		List<String> keys = new ArrayList<>();
		for (int i = 0; i < limits.size(); i += 4) {
			keys.add(key(limits.get(i)));
			if (limits.get(i).equals("swl")) {
				keys.add(key(limits.get(i)) + ":sum");
			}
		}
		return acquire(now, mode, limits, keys);
	}

	/**
	 * Calls acquire.lua with {@code limits}, four values a limit (algorithm, capacity,
	 * parameter, cost) and then any options, each bucket a key of its own.
	 */
	@SuppressWarnings("unchecked")
	private List<Object> acquire(long now, String mode, List<String> limits, List<String> keys) {
		int n = limits.size() / 4;
		List<String> args = new ArrayList<>(List.of(Long.toString(now), mode, Integer.toString(n)));
		for (int i = 0; i < n; i++) {
			args.addAll(limits.subList(i * 4, i * 4 + 4));
			args.add("");
		}
		args.addAll(limits.subList(n * 4, limits.size()));
		return redisConnection.template().execute(ACQUIRE, keys, args.toArray());
	}

	private static List<Long> allowedFlags(List<Object> reply) {
		return decisions(reply).stream().map((decision) -> decision.allowed() ? 1L : 0L).toList();
	}

	/**
	 * The decisions of acquire.lua's reply: per limit, remaining (or -1 - remaining when
	 * rejected), reset, then the delay (or the retry-after when rejected).
	 */
	private static List<Decision> decisions(List<Object> reply) {
		List<Decision> decisions = new ArrayList<>();
		for (int i = 1; i < reply.size(); i += 3) {
			long remaining = (Long) reply.get(i);
			long reset = (Long) reply.get(i + 1);
			long wait = (Long) reply.get(i + 2);
			decisions.add((remaining >= 0) ? new Decision(true, remaining, reset, 0, wait)
					: new Decision(false, -1 - remaining, reset, wait, 0));
		}
		return decisions;
	}

	private Decision tokenBucket(long now, long capacity, long interval, long cost) {
		return decide(TOKEN_BUCKET, List.of(KEY), now, capacity, interval, cost, 0);
	}

	private Decision leakyBucket(long now, long capacity, long interval, long cost) {
		return decide(LEAKY_BUCKET, List.of(KEY), now, capacity, interval, cost);
	}

	private Decision fixedWindow(long now, long capacity, long period, long cost) {
		return decide(FIXED_WINDOW, List.of(KEY), now, capacity, period, cost);
	}

	/** A calendar quota's parameter: its window boundaries, separated by spaces. */
	private static String calendarBoundaries(long... boundaries) {
		StringBuilder text = new StringBuilder();
		for (long boundary : boundaries) {
			text.append((text.length() > 0) ? " " : "").append(boundary);
		}
		return text.toString();
	}

	@SuppressWarnings("unchecked")
	private Decision calendarWindow(long now, long capacity, String boundaries, long cost) {
		List<Object> reply = redisConnection.template().execute(FIXED_WINDOW, List.of(KEY), Long.toString(now),
				"acquire", Long.toString(capacity), boundaries, Long.toString(cost));
		assertThat(reply).hasSize(6);
		assertThat(reply.get(0)).as("now").isEqualTo(now);
		return new Decision((Long) reply.get(1) == 1, (Long) reply.get(2), (Long) reply.get(3), (Long) reply.get(4),
				(Long) reply.get(5));
	}

	private Decision slidingWindowLog(long now, long capacity, long period, long cost) {
		return decide(SLIDING_WINDOW_LOG, List.of(KEY, SUM), now, capacity, period, cost);
	}

	private Decision slidingWindowCounter(long now, long capacity, long period, long cost) {
		return decide(SLIDING_WINDOW_COUNTER, List.of(KEY), now, capacity, period, cost);
	}

	@SuppressWarnings({ "rawtypes", "unchecked" })
	private Decision decide(RedisScript<List> script, List<String> keys, long now, long... args) {
		List<Object> reply = redisConnection.template().execute(script, keys, arguments(now, "acquire", args));
		assertThat(reply).hasSize(6);
		assertThat(reply.get(0)).as("now").isEqualTo(now);
		return new Decision((Long) reply.get(1) == 1, (Long) reply.get(2), (Long) reply.get(3), (Long) reply.get(4),
				(Long) reply.get(5));
	}

	@SuppressWarnings({ "rawtypes", "unchecked" })
	private List<Object> refund(RedisScript<List> script, List<String> keys, long timestamp, long... args) {
		return redisConnection.template().execute(script, keys, arguments(timestamp, "refund", args));
	}

	private static Object[] arguments(long now, String mode, long... args) {
		Object[] all = new Object[args.length + 2];
		all[0] = Long.toString(now);
		all[1] = mode;
		for (int i = 0; i < args.length; i++) {
			all[i + 2] = Long.toString(args[i]);
		}
		return all;
	}

	/** The times of the log's entries, oldest first. */
	private List<Long> log() {
		Set<String> members = redisConnection.template().opsForZSet().range(KEY, 0, -1);
		return members.stream().map((member) -> Long.parseLong(member.substring(0, member.indexOf(':')))).toList();
	}

	/**
	 * Checks that exactly these keys exist, each with a TTL at most its bound (ms) and not
	 * more than {@link #SLACK_MILLIS} below it.
	 */
	private void assertKeysExpireWithin(Map<String, Long> ttlMillis) {
		assertThat(scanKeys()).as("keys").containsExactlyInAnyOrderElementsOf(ttlMillis.keySet());
		ttlMillis.forEach((key, max) -> assertThat(redisConnection.template().getExpire(key, TimeUnit.MILLISECONDS)).as("PTTL of %s", key)
			.isPositive()
			.isLessThanOrEqualTo(max)
			.isGreaterThan(max - SLACK_MILLIS));
	}

	private Set<String> scanKeys() {
		Set<String> keys = new TreeSet<>();
		try (Cursor<String> cursor = redisConnection.template().scan(ScanOptions.scanOptions().match("lua:*").count(100).build())) {
			cursor.forEachRemaining(keys::add);
		}
		return keys;
	}

	/** Every key's value: strings as they are, the log as members with scores. */
	private Map<String, Object> snapshot() {
		Map<String, Object> values = new TreeMap<>();
		for (String key : scanKeys()) {
			if (redisConnection.template().type(key) == DataType.ZSET) {
				values.put(key, redisConnection.template().opsForZSet()
					.rangeWithScores(key, 0, -1)
					.stream()
					.map((tuple) -> tuple.getValue() + "@" + tuple.getScore().longValue())
					.toList());
			}
			else {
				values.put(key, RedisValues.value(redisConnection.template(), key));
			}
		}
		return values;
	}

	private static String messages(Throwable ex) {
		StringBuilder text = new StringBuilder();
		for (Throwable cause = ex; cause != null; cause = cause.getCause()) {
			text.append(cause.getMessage()).append('\n');
		}
		return text.toString();
	}

	private static Decision allowed(long remaining, long reset) {
		return new Decision(true, remaining, reset, 0, 0);
	}

	private static Decision allowed(long remaining, long reset, long delay) {
		return new Decision(true, remaining, reset, 0, delay);
	}

	private static Decision rejected(long remaining, long reset, long retryAfter) {
		return new Decision(false, remaining, reset, retryAfter, 0);
	}

	/** A decision as a standalone script replies it, after {@code now}. */
	private record Decision(boolean allowed, long remaining, long reset, long retryAfter, long delay) {

	}

}
