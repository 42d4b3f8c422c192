package io.github.ratelimit.internal.core;

import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;

import io.github.ratelimit.store.Acquisition;

/**
 * What calls of limits that settle their cost after the call reserved and were charged,
 * per limit, since the limiter started. Only settling calls are counted, when they settle:
 * ordinary decisions never touch it. Bounded by the limit names, which come from
 * configuration; never by identity.
 */
public final class SettledCosts {

	private final Map<String, Tally> byLimit = new ConcurrentHashMap<>();

	/**
	 * Counts settled acquisitions: each reserved its cost and was charged the actual cost
	 * at the same index.
	 * @param reserved the acquisitions as they were decided
	 * @param actualCosts the actual cost of each acquisition, in order
	 */
	public void record(List<Acquisition> reserved, long[] actualCosts) {
		for (int i = 0; i < reserved.size(); i++) {
			Acquisition acquisition = reserved.get(i);
			this.byLimit.computeIfAbsent(acquisition.limit().name(), (name) -> new Tally())
				.add(acquisition.cost(), actualCosts[i]);
		}
	}

	/**
	 * The totals of one limit.
	 * @param limit the limit name
	 * @return what its settled calls reserved and were charged; zeros when none settled
	 */
	public Totals of(String limit) {
		Tally tally = this.byLimit.get(limit);
		return (tally != null) ? tally.totals() : Totals.NONE;
	}

	/**
	 * The totals of every limit whose calls settled, by limit name.
	 * @return the totals, sorted by limit name
	 */
	public Map<String, Totals> all() {
		Map<String, Totals> all = new TreeMap<>();
		this.byLimit.forEach((name, tally) -> all.put(name, tally.totals()));
		return all;
	}

	/**
	 * What settled calls of one limit reserved and were charged, in the limit's unit.
	 * {@code reserved - returned + overdrawn == settled}.
	 *
	 * @param calls how many acquisitions settled
	 * @param reserved units reserved when they were admitted
	 * @param settled units they were charged in the end: their actual costs
	 * @param returned units reserved beyond the actual cost, given back
	 * @param overdrawn units charged beyond the reservation
	 */
	public record Totals(long calls, long reserved, long settled, long returned, long overdrawn) {

		/** No call settled. */
		public static final Totals NONE = new Totals(0, 0, 0, 0, 0);

	}

	/** Running sums of one limit; a reader may see one call's amounts half added. */
	private static final class Tally {

		private final LongAdder calls = new LongAdder();

		private final LongAdder reserved = new LongAdder();

		private final LongAdder settled = new LongAdder();

		private final LongAdder returned = new LongAdder();

		private final LongAdder overdrawn = new LongAdder();

		void add(long reservedCost, long actualCost) {
			this.calls.increment();
			this.reserved.add(reservedCost);
			this.settled.add(actualCost);
			if (actualCost < reservedCost) {
				this.returned.add(reservedCost - actualCost);
			}
			else if (actualCost > reservedCost) {
				this.overdrawn.add(actualCost - reservedCost);
			}
		}

		Totals totals() {
			return new Totals(this.calls.sum(), this.reserved.sum(), this.settled.sum(), this.returned.sum(),
					this.overdrawn.sum());
		}

	}

}
