package io.github.ratelimit.internal.redis;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import io.lettuce.core.cluster.SlotHash;

/**
 * Groups the buckets of a call by Redis Cluster slot: each group is decided by one script
 * call, the keys of a script all being in one slot. Outside a Cluster every call is one
 * group.
 */
final class SlotPlanner {

	private final boolean cluster;

	SlotPlanner(boolean cluster) {
		this.cluster = cluster;
	}

	boolean cluster() {
		return this.cluster;
	}

	/**
	 * The groups of a call, in the order of their first bucket.
	 * @param call the call
	 * @return the indices of its buckets, a group per slot
	 */
	List<int[]> groups(ScriptCall call) {
		int count = call.keys.length;
		if (!this.cluster || count == 1) {
			int[] all = new int[count];
			for (int i = 0; i < count; i++) {
				all[i] = i;
			}
			return List.of(all);
		}
		Map<Integer, List<Integer>> slots = new LinkedHashMap<>();
		for (int i = 0; i < count; i++) {
			slots.computeIfAbsent(SlotHash.getSlot(call.keys[i]), (s) -> new ArrayList<>(2)).add(i);
		}
		List<int[]> groups = new ArrayList<>(slots.size());
		for (List<Integer> slot : slots.values()) {
			groups.add(slot.stream().mapToInt(Integer::intValue).toArray());
		}
		return groups;
	}

	/**
	 * The slot of a group's keys.
	 * @param call the call
	 * @param group a group of its buckets
	 * @return the slot, or 0 outside a Cluster
	 */
	int slot(ScriptCall call, int[] group) {
		return this.cluster ? SlotHash.getSlot(call.keys[group[0]]) : 0;
	}

}
