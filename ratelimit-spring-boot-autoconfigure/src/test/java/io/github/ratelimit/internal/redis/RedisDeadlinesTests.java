package io.github.ratelimit.internal.redis;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The deadlines of script calls on a Redis clock offset from this JVM's by any amount,
 * with synthetic times: a call's deadline is never before its caller gives up, whatever
 * the offset, and is after it by at most the shortest trip observed.
 */
class RedisDeadlinesTests {

	private static final long TIMEOUT_NANOS = 250_000_000;

	/** This JVM's monotonic clock at the start, in nanoseconds; any value will do. */
	private static final long START = -7_000_000_000L;

	@Test
	void givesNoDeadlineBeforeTheFirstReply() {
		assertThat(new RedisDeadlines(TIMEOUT_NANOS, false).deadline(0, START)).isEqualTo(-1);
	}

	@ParameterizedTest
	@ValueSource(longs = { 0, 3_600_000_000L, -3_600_000_000L, 1_704_067_200_000_000L })
	void aDeadlineIsTheGiveUpOnRedisClockLateByAtMostTheShortestTrip(long offsetMicros) {
		RedisDeadlines deadlines = new RedisDeadlines(TIMEOUT_NANOS, false);
		// a slow trip (sent, run 40ms later, answered 1ms after that), then a quick one
		reply(deadlines, 0, START, 40_000, 1_000, offsetMicros);
		reply(deadlines, 0, START + 1_000_000_000L, 120, 80, offsetMicros);
		long prepared = START + 2_000_000_000L;
		long giveUpOnRedis = (prepared + TIMEOUT_NANOS) / 1000 + offsetMicros;
		assertThat(deadlines.deadline(0, prepared)).isBetween(giveUpOnRedis, giveUpOnRedis + 120);
	}

	@Test
	void aStallDoesNotLoosenTheDeadline() {
		RedisDeadlines deadlines = new RedisDeadlines(TIMEOUT_NANOS, false);
		reply(deadlines, 0, START, 100, 100, 0);
		long before = deadlines.deadline(0, START);
		// a call that waited three seconds for Redis
		reply(deadlines, 0, START, 3_000_000, 100, 0);
		assertThat(deadlines.deadline(0, START)).isEqualTo(before);
	}

	@Test
	void aRedisClockSteppedForwardRaisesTheDeadlineOnItsFirstReply() {
		RedisDeadlines deadlines = new RedisDeadlines(TIMEOUT_NANOS, false);
		reply(deadlines, 0, START, 100, 100, 0);
		// Redis's clock jumps a second ahead: the reply's lower bound is above the estimate
		reply(deadlines, 0, START + 1_000_000_000L, 100, 100, 1_000_000);
		long prepared = START + 2_000_000_000L;
		assertThat(deadlines.deadline(0, prepared)).isBetween((prepared + TIMEOUT_NANOS) / 1000 + 1_000_000,
				(prepared + TIMEOUT_NANOS) / 1000 + 1_000_100);
	}

	@Test
	void aRedisClockSteppedBackTightensTheDeadlineOnItsFirstReply() {
		RedisDeadlines deadlines = new RedisDeadlines(TIMEOUT_NANOS, false);
		reply(deadlines, 0, START, 100, 100, 0);
		reply(deadlines, 0, START + 1_000_000_000L, 100, 100, -1_000_000);
		long prepared = START + 2_000_000_000L;
		assertThat(deadlines.deadline(0, prepared)).isBetween((prepared + TIMEOUT_NANOS) / 1000 - 1_000_000,
				(prepared + TIMEOUT_NANOS) / 1000 - 999_900);
	}

	@Test
	void eachClusterSlotKeepsTheClockOfItsServer() {
		RedisDeadlines deadlines = new RedisDeadlines(TIMEOUT_NANOS, true);
		// two servers whose clocks are two seconds apart
		reply(deadlines, 100, START, 100, 100, 0);
		reply(deadlines, 9_000, START, 100, 100, 2_000_000);
		long prepared = START + 1_000_000_000L;
		long giveUp = (prepared + TIMEOUT_NANOS) / 1000;
		assertThat(deadlines.deadline(100, prepared)).isBetween(giveUp, giveUp + 100);
		assertThat(deadlines.deadline(9_000, prepared)).isBetween(giveUp + 2_000_000, giveUp + 2_000_100);
		assertThat(deadlines.deadline(5_000, prepared)).isBetween(giveUp + 2_000_000, giveUp + 2_000_100);
		// TIME read on any node informs slots not heard from, not the others
		deadlines.observe(-1, prepared, prepared + 200_000, prepared / 1000 + 100 - 3_000_000);
		assertThat(deadlines.deadline(100, prepared)).isBetween(giveUp, giveUp + 100);
		assertThat(deadlines.deadline(5_000, prepared)).isBetween(giveUp - 3_000_000, giveUp - 2_999_800);
	}

	/**
	 * A reply to a call sent at {@code sentNanos} that Redis ran {@code toRedisMicros}
	 * later, at its time {@code offsetMicros} ahead of this JVM's clock, and whose reply
	 * took {@code backMicros}.
	 */
	private static void reply(RedisDeadlines deadlines, int slot, long sentNanos, long toRedisMicros, long backMicros,
			long offsetMicros) {
		long ranAt = sentNanos / 1000 + toRedisMicros;
		deadlines.observe(slot, sentNanos, (ranAt + backMicros) * 1000, ranAt + offsetMicros);
	}

}
