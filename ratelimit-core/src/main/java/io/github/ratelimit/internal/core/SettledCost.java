package io.github.ratelimit.internal.core;

/**
 * How a limit that settles costs after the call finds what a call reserves and what it
 * actually cost, as written (the expressions are SpEL, parsed and evaluated by the layer
 * that knows the call).
 *
 * @param estimate expression for the cost a call reserves when it starts, or {@code null}
 * when the limit's cost is the reservation
 * @param actualCost expression for the actual cost over the call's result, or
 * {@code null}
 * @param actualCostHeader the response header carrying the actual cost, or {@code null}
 */
public record SettledCost(String estimate, String actualCost, String actualCostHeader) {

	/** A limit whose cost is fixed: nothing is settled after the call. */
	public static final SettledCost NONE = new SettledCost(null, null, null);

	/**
	 * Whether calls settle: any of the three is set. A limit that sets none is never
	 * settled, not even by a cost a call reports.
	 * @return whether calls settle
	 */
	public boolean settles() {
		return this.estimate != null || this.actualCost != null || this.actualCostHeader != null;
	}

	@Override
	public String toString() {
		return "estimate=" + this.estimate + " actual-cost=" + this.actualCost + " actual-cost-header="
				+ this.actualCostHeader;
	}

}
