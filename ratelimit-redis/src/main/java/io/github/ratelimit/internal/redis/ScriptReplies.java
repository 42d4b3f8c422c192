package io.github.ratelimit.internal.redis;

import java.util.List;

import io.github.ratelimit.internal.core.ShareGrant;
import io.github.ratelimit.store.RateLimit;
import io.github.ratelimit.store.RateLimitDecision;
import io.github.ratelimit.store.RateLimitResult;

/**
 * Reads the script's replies: the time decided at, then for each bucket of the group its
 * remaining units (or {@code -1 - remaining} when rejected), reset and delay (or
 * retry-after when rejected), then for a lease the extras taken.
 */
final class ScriptReplies {

	private ScriptReplies() {
	}

	/**
	 * Fills the decisions of a group from the script's reply.
	 * @param reply the reply
	 * @param call the call
	 * @param group the indices of the buckets decided
	 * @param decisions where the decisions go, or {@code null} to only check the reply
	 * @return the time decided at
	 */
	static long parse(List<?> reply, ScriptCall call, int[] group, RateLimitDecision[] decisions) {
		if (reply == null || reply.isEmpty()) {
			throw new IllegalStateException("Rate limit script returned no reply");
		}
		if (decisions != null) {
			long decidedAt = number(reply, 0);
			for (int g = 0; g < group.length; g++) {
				// remaining when admitted, -1 - remaining when rejected; then reset, then the
				// delay when admitted or the retry-after when rejected
				int base = 1 + g * 3;
				long remaining = number(reply, base);
				long reset = number(reply, base + 1);
				long wait = number(reply, base + 2);
				RateLimit limit = call.rateLimits[group[g]];
				long window = call.limits[group[g]].windowMicros(decidedAt, reset);
				decisions[group[g]] = (remaining >= 0)
						? new RateLimitDecision(limit, true, remaining, reset, 0, wait, window)
						: new RateLimitDecision(limit, false, -1 - remaining, reset, Math.max(1, wait), 0, window);
			}
		}
		return number(reply, 0);
	}

	/**
	 * The units a lease call took beyond the cost of a bucket.
	 * @param reply the reply
	 * @param groupSize the number of buckets the call decided
	 * @param g the bucket's position in its group
	 * @return the extra units
	 */
	static long extra(List<?> reply, int groupSize, int g) {
		return number(reply, 1 + 3 * groupSize + g);
	}

	/** The decisions of a lease call, and the units it took beyond each cost. */
	static ShareGrant leased(List<?> reply, ScriptCall call, int[] group) {
		RateLimitDecision[] decisions = new RateLimitDecision[call.size()];
		long timestamp = parse(reply, call, group, decisions);
		long[] extra = new long[call.size()];
		for (int g = 0; g < group.length; g++) {
			extra[group[g]] = extra(reply, group.length, g);
		}
		return new ShareGrant(result(call, decisions, timestamp), extra);
	}

	/** The decisions of a call deciding in one script call. */
	static RateLimitResult decided(List<?> reply, ScriptCall call, int[] group) {
		RateLimitDecision[] decisions = new RateLimitDecision[call.size()];
		long timestamp = parse(reply, call, group, decisions);
		return result(call, decisions, timestamp);
	}

	/**
	 * The result of a call; when one limit rejects, the others consumed nothing, so they
	 * report the quota they still hold.
	 */
	static RateLimitResult result(ScriptCall call, RateLimitDecision[] decisions, long timestamp) {
		boolean allowed = true;
		for (RateLimitDecision decision : decisions) {
			allowed &= !decision.rejects();
		}
		if (!allowed) {
			for (int i = 0; i < decisions.length; i++) {
				decisions[i] = decisions[i].uncommitted(call.costs[i]);
			}
		}
		return new RateLimitResult(List.of(decisions), timestamp, RateLimitResult.REDIS);
	}

	static long number(List<?> reply, int index) {
		return ((Number) reply.get(index)).longValue();
	}

}
