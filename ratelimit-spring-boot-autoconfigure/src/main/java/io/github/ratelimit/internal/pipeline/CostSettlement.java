package io.github.ratelimit.internal.pipeline;

import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

import org.springframework.expression.EvaluationContext;

import io.github.ratelimit.RateLimitUsage;
import io.github.ratelimit.internal.core.LimitDefinition;
import io.github.ratelimit.internal.core.RateLimiter;
import io.github.ratelimit.internal.core.UsageReports;
import io.github.ratelimit.store.Acquisition;
import io.github.ratelimit.store.RateLimitResult;

/**
 * Reserves and settles the costs of limits that know a call's cost only when it ends
 * ({@code estimate}, {@code actualCost}, {@code actualCostHeader}): a call reserves its
 * estimate (or the limit's cost) when it starts, and once it ends its actual cost is
 * settled in one store call for every limit of the call that settles, never for the
 * others. The actual cost of each limit is, in order: what the call reported to its
 * {@link RateLimitUsage}, the limit's response header (web handlers), the limit's
 * {@code actualCost} over the result; when none is known the reservation stands and the
 * store is not called. A call that throws or is cancelled settles what it reported, and
 * otherwise keeps its reservation (or, when so configured, gives it back). What a limit counting outcomes gave back for the call
 * (its outcome does not count) is not settled: the refund wins.
 */
public final class CostSettlement {

	private static final CompletionStage<Void> DONE = CompletableFuture.completedFuture(null);

	private final RateLimiter limiter;

	private final CostExpressions expressions;

	private final boolean failedCallsKeepReservation;

	/**
	 * Creates a settlement.
	 * @param limiter settles
	 * @param expressions evaluates estimates and actual costs
	 * @param failedCallsKeepReservation whether a call that fails or is cancelled, having
	 * reported no cost, keeps its reservation ({@code ratelimit.failed-calls-keep-reservation},
	 * the default) or gives it all back
	 */
	public CostSettlement(RateLimiter limiter, CostExpressions expressions, boolean failedCallsKeepReservation) {
		this.limiter = limiter;
		this.expressions = expressions;
		this.failedCallsKeepReservation = failedCallsKeepReservation;
	}

	/**
	 * What a call that failed or was cancelled costs when it reported nothing: its
	 * reservation ({@link CostExpressions#UNKNOWN}, which settles nothing) or nothing.
	 * @param reported what it reported, or {@link UsageReports#UNREPORTED}
	 * @return the actual cost to settle
	 */
	long failedCallCost(long reported) {
		if (reported != UsageReports.UNREPORTED) {
			return reported;
		}
		return this.failedCallsKeepReservation ? CostExpressions.UNKNOWN : 0;
	}

	/**
	 * The acquisitions a call of a limit makes: its estimate when the limit has one that
	 * gives a value, otherwise its cost.
	 * @param definition the limit
	 * @param identity the call's identity
	 * @param plan the call's plan, or {@code null}
	 * @param method the invoked method, or {@code null} for a route limit
	 * @param args the arguments
	 * @param request the native request, or {@code null}
	 * @return the acquisitions
	 */
	public List<Acquisition> reserve(LimitDefinition definition, String identity, String plan, Method method,
			Object[] args, Object request) {
		if (definition.settledCost().estimate() == null) {
			return definition.acquisitions(identity, plan);
		}
		long estimate = this.expressions.estimate(definition, method, args, request);
		return (estimate == CostExpressions.UNKNOWN) ? definition.acquisitions(identity, plan)
				: definition.acquisitions(identity, plan, estimate);
	}

	/**
	 * The acquisitions a call of a limit makes, with its estimate over variables set
	 * already (a reactive handler's, before its arguments are resolved).
	 * @param definition the limit
	 * @param identity the call's identity
	 * @param plan the call's plan, or {@code null}
	 * @param variables what the estimate may read
	 * @return the acquisitions
	 */
	public List<Acquisition> reserve(LimitDefinition definition, String identity, String plan,
			EvaluationContext variables) {
		long estimate = this.expressions.estimate(definition, variables);
		return (estimate == CostExpressions.UNKNOWN) ? definition.acquisitions(identity, plan)
				: definition.acquisitions(identity, plan, estimate);
	}

	/**
	 * The actual cost a limit's {@code actualCost} gives for a call that returned.
	 * @param definition the limit
	 * @param method the invoked method
	 * @param args the arguments
	 * @param value what it returned
	 * @return the cost, or {@link CostExpressions#UNKNOWN}
	 */
	public long actualCost(LimitDefinition definition, Method method, Object[] args, Object value) {
		return this.expressions.actualCost(definition, method, args, value);
	}

	/**
	 * Settles a call of a bean method that returned.
	 * @param settled the limits of the call that settle
	 * @param decided every acquisition of the call, in the order of the decision
	 * @param result the decision that admitted the call
	 * @param refunded what was given back for the call already (its outcome did not count)
	 * @param usage the call's usage
	 * @param method the invoked method
	 * @param args its arguments
	 * @param value what it returned (for a {@code Mono}, the value it emitted)
	 * @param async whether to settle without waiting for the store
	 */
	public void settleReturned(List<SettledCall> settled, List<Acquisition> decided, RateLimitResult result,
			List<Acquisition> refunded, RateLimitUsage usage, Method method, Object[] args, Object value,
			boolean async) {
		long reported = UsageReports.reported(usage);
		Settlement settlement = new Settlement();
		for (SettledCall call : settled) {
			long actual = (reported != UsageReports.UNREPORTED) ? reported
					: this.expressions.actualCost(call.definition(), method, args, value);
			settlement.add(call.acquisitions(), decided, result, refunded, actual);
		}
		settle(settlement, result, async);
	}

	/**
	 * Settles a call of a bean method that threw, or whose caller cancelled it: what it
	 * reported, if anything; otherwise its reservation stands (settled at what it reserved,
	 * which costs no store call but counts the call in the settled totals), or is given
	 * back when failed calls do not keep it.
	 * @param settled the limits of the call that settle
	 * @param decided every acquisition of the call, in the order of the decision
	 * @param result the decision that admitted the call
	 * @param refunded what was given back for the call already
	 * @param usage the call's usage
	 * @param async whether to settle without waiting for the store
	 */
	public void settleEnded(List<SettledCall> settled, List<Acquisition> decided, RateLimitResult result,
			List<Acquisition> refunded, RateLimitUsage usage, boolean async) {
		long actual = failedCallCost(UsageReports.reported(usage));
		Settlement settlement = new Settlement();
		for (SettledCall call : settled) {
			settlement.add(call.acquisitions(), decided, result, refunded, actual);
		}
		settle(settlement, result, async);
	}

	/**
	 * Settles acquisitions at actual costs already known, in one store call.
	 * @param acquisitions the admitted acquisitions to settle
	 * @param actualCosts their actual costs, one each
	 * @param result the decision that admitted them
	 * @param async whether to settle without waiting for the store
	 * @return completes when the store has answered (a failed settlement is dropped)
	 */
	CompletionStage<Void> settle(List<Acquisition> acquisitions, long[] actualCosts, RateLimitResult result,
			boolean async) {
		if (acquisitions.isEmpty()) {
			return DONE;
		}
		if (async) {
			// the store counts and logs a settlement it fails; the call's answer stands
			return this.limiter.settleAsync(acquisitions, result, actualCosts)
				.exceptionally((failure) -> null);
		}
		try {
			this.limiter.settle(acquisitions, result, actualCosts);
		}
		catch (RuntimeException ex) {
			// the call's own outcome stands; the store logs and counts its failures
		}
		return DONE;
	}

	private void settle(Settlement settlement, RateLimitResult result, boolean async) {
		settle(settlement.acquisitions, settlement.costs(), result, async);
	}

	/**
	 * What one call settles: every admitted acquisition not given back, at its actual
	 * cost, or at what it reserved when the actual cost is unknown. The limiter makes no
	 * store call for those settled at what they reserved, but counts them in the settled
	 * totals and tells its observer, so that what was reserved is accounted for.
	 */
	static final class Settlement {

		final List<Acquisition> acquisitions = new ArrayList<>(2);

		private final List<Long> actualCosts = new ArrayList<>(2);

		void add(List<Acquisition> some, List<Acquisition> decided, RateLimitResult result,
				List<Acquisition> refunded, long actual) {
			for (Acquisition acquisition : OutcomeSettlement.admitted(some, decided, result)) {
				if (!containsInstance(refunded, acquisition)) {
					this.acquisitions.add(acquisition);
					this.actualCosts.add((actual != CostExpressions.UNKNOWN) ? actual : acquisition.cost());
				}
			}
		}

		long[] costs() {
			long[] costs = new long[this.actualCosts.size()];
			for (int i = 0; i < costs.length; i++) {
				costs[i] = this.actualCosts.get(i);
			}
			return costs;
		}

		private static boolean containsInstance(List<Acquisition> acquisitions, Acquisition wanted) {
			for (Acquisition acquisition : acquisitions) {
				if (acquisition == wanted) {
					return true;
				}
			}
			return false;
		}

	}

	/**
	 * The acquisitions of one limit of a call that settles its cost.
	 *
	 * @param acquisitions the limit's acquisitions (with its candidate's)
	 * @param definition the limit, whose expressions and header give the actual cost
	 */
	public record SettledCall(List<Acquisition> acquisitions, LimitDefinition definition) {

		public SettledCall {
			acquisitions = List.copyOf(acquisitions);
		}

	}

}
