package io.github.ratelimit.internal.redis;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import io.github.ratelimit.internal.core.ShareRequest;
import io.github.ratelimit.internal.core.ShareGrant;
import io.github.ratelimit.internal.redis.ScriptArguments.Invocation;
import io.github.ratelimit.internal.redis.ScriptArguments.Mode;
import io.github.ratelimit.store.Acquisition;
import io.github.ratelimit.store.RateLimitDecision;
import io.github.ratelimit.store.RateLimitResult;

/**
 * Decides, synchronously, the calls whose buckets fall into several Redis Cluster slots:
 * the slots one after another with one timestamp, those already consumed refunded if a
 * later one rejects; and the calls of one slot, in one script call.
 */
final class SlotSequence {

	private final ScriptRunner runner;

	private final ScriptArguments arguments;

	private final SlotPlanner slots;

	private final CallFactory calls;

	SlotSequence(ScriptRunner runner, ScriptArguments arguments, SlotPlanner slots, CallFactory calls) {
		this.runner = runner;
		this.arguments = arguments;
		this.slots = slots;
		this.calls = calls;
	}

	/**
	 * Decides a call, one slot after another when it spans several.
	 * @param call the call
	 * @param groups its buckets by slot
	 * @param maxDelayMicros the longest delay a reservation may take
	 * @return the decisions
	 */
	RateLimitResult acquire(ScriptCall call, List<int[]> groups, long maxDelayMicros) {
		RateLimitDecision[] decisions = new RateLimitDecision[call.size()];
		long now = this.arguments.now();
		if (groups.size() == 1) {
			long timestamp = this.runner.run(call, groups.get(0), now, Mode.ACQUIRE, maxDelayMicros, decisions);
			return ScriptReplies.result(call, decisions, timestamp);
		}
		List<int[]> consumed = new ArrayList<>();
		boolean allowed = true;
		try {
			for (int[] group : groups) {
				now = this.runner.run(call, group, now, allowed ? Mode.ACQUIRE : Mode.CHECK, maxDelayMicros, decisions);
				boolean groupAllowed = Arrays.stream(group).noneMatch((i) -> decisions[i].rejects());
				if (allowed && groupAllowed) {
					// only what was taken is given back: a shadow limit that rejected took nothing
					consumed.add(Arrays.stream(group).filter((i) -> decisions[i].allowed()).toArray());
				}
				allowed &= groupAllowed;
			}
		}
		catch (RuntimeException ex) {
			// a later slot failed: give back what the earlier ones took, then let the fallback decide
			refundQuietly(call, consumed, now);
			throw ex;
		}
		if (!allowed) {
			for (int[] group : consumed) {
				if (group.length > 0) {
					this.runner.run(call, group, now, Mode.REFUND, 0, null);
				}
			}
		}
		return ScriptReplies.result(call, decisions, now);
	}

	/**
	 * Gives back what a call took, slot after slot, at the time it was decided.
	 * @param call the call
	 * @param decidedAt the time it was decided at
	 */
	void refund(ScriptCall call, long decidedAt) {
		for (int[] group : this.slots.groups(call)) {
			this.runner.run(call, group, decidedAt, Mode.REFUND, 0, null);
		}
	}

	/**
	 * Settles what a call reserved at actual costs, slot after slot: each slot's buckets in
	 * one script call, giving back at the time it was decided and charging at Redis time.
	 * @param call the reserved acquisitions
	 * @param decidedAt the time they were decided at
	 * @param actualCosts the actual cost of each
	 */
	void settle(ScriptCall call, long decidedAt, long[] actualCosts) {
		for (int[] group : this.slots.groups(call)) {
			Invocation invocation = this.arguments.settle(call, group, this.arguments.now(), decidedAt, actualCosts);
			ScriptReplies.parse(this.runner.execute(invocation), call, group, null);
		}
	}

	/**
	 * Shares spanning several Cluster slots: the costs decided exactly, slot after slot,
	 * then, when they are admitted, the extras leased slot after slot with no cost, at the
	 * time the costs were decided. The extras are not atomic with the costs: a concurrent
	 * caller can leave some ungranted, and a slot that fails grants none, but nothing is
	 * granted that its bucket did not have.
	 */
	ShareGrant leaseAcrossSlots(List<ShareRequest> leases) {
		List<Acquisition> acquisitions = new ArrayList<>(leases.size());
		for (ShareRequest lease : leases) {
			if (lease.cost() > 0) {
				acquisitions.add(new Acquisition(lease.limit(), lease.identity(), lease.cost()));
			}
		}
		RateLimitResult paid = null;
		if (!acquisitions.isEmpty()) {
			ScriptCall costs = this.calls.acquisitions(acquisitions);
			paid = acquire(costs, this.slots.groups(costs), 0);
		}
		long now = (paid != null) ? paid.timestampMicros() : this.arguments.now();
		RateLimitDecision[] decisions = new RateLimitDecision[leases.size()];
		int next = 0;
		for (int i = 0; i < leases.size(); i++) {
			ShareRequest lease = leases.get(i);
			decisions[i] = (lease.cost() > 0) ? paid.decisions().get(next++)
					: new RateLimitDecision(lease.limit(), true, 0, 0, 0, 0);
		}
		long[] extra = new long[leases.size()];
		if (paid == null || paid.allowed()) {
			now = leaseExtras(leases, now, paid == null, decisions, extra);
		}
		long timestamp = (paid != null) ? paid.timestampMicros() : now;
		return new ShareGrant(new RateLimitResult(List.of(decisions), timestamp, RateLimitResult.REDIS), extra);
	}

	/** Grants the extras slot after slot with no cost; returns the time decided at. */
	private long leaseExtras(List<ShareRequest> leases, long now, boolean nothingPaid, RateLimitDecision[] decisions,
			long[] extra) {
		ScriptCall call = this.calls.extrasOf(leases);
		long[] wanted = CallFactory.extras(leases);
		for (int[] group : this.slots.groups(call)) {
			try {
				Invocation invocation = this.arguments.prepare(call, group, now, Mode.LEASE, 0, wanted);
				List<?> reply = this.runner.execute(invocation);
				RateLimitDecision[] taken = new RateLimitDecision[leases.size()];
				long timestamp = ScriptReplies.parse(reply, call, group, taken);
				for (int g = 0; g < group.length; g++) {
					int i = group[g];
					if (taken[i].allowed()) {
						extra[i] = ScriptReplies.extra(reply, group.length, g);
						decisions[i] = taken[i];
					}
				}
				if (now == ScriptArguments.NOW_FROM_REDIS) {
					now = timestamp;
				}
			}
			catch (RuntimeException ex) {
				if (nothingPaid) {
					throw ex;
				}
				// the costs stand: this slot's shares get nothing more now
			}
		}
		return now;
	}

	private void refundQuietly(ScriptCall call, List<int[]> consumed, long now) {
		for (int[] group : consumed) {
			try {
				if (group.length > 0) {
					this.runner.run(call, group, now, Mode.REFUND, 0, null);
				}
			}
			catch (RuntimeException ignored) {
				// the store is failing: the fallback decides, and the key expires on its own
			}
		}
	}

}
