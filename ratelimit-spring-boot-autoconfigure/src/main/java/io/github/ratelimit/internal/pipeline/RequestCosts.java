package io.github.ratelimit.internal.pipeline;

import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.Function;

import io.github.ratelimit.RateLimitUsage;
import io.github.ratelimit.internal.core.LimitDefinition;
import io.github.ratelimit.internal.core.UsageReports;
import io.github.ratelimit.store.Acquisition;
import io.github.ratelimit.store.RateLimitResult;

/**
 * The limits of one web request that settle its actual cost once its response is final,
 * and the {@link RateLimitUsage} its handler reports to. A web stack keeps one per
 * request that has such limits (or whose handler asks for its usage), as a request or
 * exchange attribute named {@link #ATTRIBUTE}, beside its {@link RequestLimits}.
 * <p>
 * The actual cost of each limit is, in order: what the handler reported, the limit's
 * response header, the limit's {@code actualCost} over what the handler returned; none
 * known leaves the reservation. A limit counting some statuses that does not count the
 * final one was given back everything, and is not settled: the refund wins.
 */
public final class RequestCosts {

	/** Name of the request or exchange attribute holding the costs. */
	public static final String ATTRIBUTE = RequestCosts.class.getName();

	private static final CompletionStage<Void> DONE = CompletableFuture.completedFuture(null);

	private final RateLimitUsage usage = UsageReports.open();

	private List<Pending> pending = new ArrayList<>(2);

	private boolean streamed;

	/**
	 * Where the request's handler reports its actual cost.
	 * @return the usage
	 */
	public RateLimitUsage usage() {
		return this.usage;
	}

	/**
	 * Whether some limit of the request settles once its response is final.
	 * @return whether {@link #settle} has work to do
	 */
	public synchronized boolean settles() {
		return !this.pending.isEmpty();
	}

	/**
	 * Says that acquisitions about to be decided for the request settle their cost.
	 * @param acquisitions the acquisitions of one limit (and its candidate)
	 * @param definition the limit
	 */
	public synchronized void settleOnly(List<Acquisition> acquisitions, LimitDefinition definition) {
		this.pending.add(new Pending(acquisitions, definition));
	}

	/**
	 * Records the decision that admitted acquisitions of the request, among which some
	 * settle.
	 * @param decided the acquisitions decided, in order
	 * @param result the decision
	 */
	public synchronized void admitted(List<Acquisition> decided, RateLimitResult result) {
		for (Pending limit : this.pending) {
			if (limit.result == null && containsInstance(decided, limit.acquisitions.get(0))) {
				limit.decided = decided;
				limit.result = result;
			}
		}
	}

	/**
	 * Forgets what a rejected decision would have settled, and everything when what
	 * earlier stages consumed is given back too.
	 * @param everything whether the request as a whole was refused
	 */
	public synchronized void rejected(boolean everything) {
		this.pending.removeIf((limit) -> everything || limit.result == null);
	}

	/**
	 * Records what the request's handler returned: the actual cost of limits settling over
	 * {@code #result}.
	 * @param costs evaluates the expressions
	 * @param method the handler method
	 * @param args its arguments
	 * @param value what it returned
	 */
	public synchronized void returned(CostSettlement costs, Method method, Object[] args, Object value) {
		for (Pending limit : this.pending) {
			if (limit.definition.settledCost().actualCost() != null) {
				limit.fromResult = costs.actualCost(limit.definition, method, args, value);
			}
		}
	}

	/**
	 * Says that the request's handler streams its response: its costs settle as the stream
	 * ends, not as the response commits.
	 */
	public synchronized void streams() {
		this.streamed = true;
	}

	/**
	 * Whether the request's handler streams its response, whose end settles its costs.
	 * @return whether the stream settles
	 */
	public synchronized boolean streamed() {
		return this.streamed;
	}

	/**
	 * Settles, once, a request whose response ended before it was complete (its stream
	 * failed, or its client went away): what its handler reported so far, if anything;
	 * otherwise the reservation stands, or is given back when failed calls do not keep it.
	 * @param costs settles
	 * @param async whether to settle without waiting for the store
	 * @return completes when the store has answered (a failed settlement is dropped)
	 */
	public CompletionStage<Void> settleEnded(CostSettlement costs, boolean async) {
		return settle(0, null, costs, async);
	}

	/**
	 * Settles, once, what limits of the request admitted it reserved, against the actual
	 * cost known now that its response is final.
	 * @param status the final response status
	 * @param headers the value of a response header by name ({@code null} when absent);
	 * {@code null} for a response that ended early (see {@link #settleEnded})
	 * @param costs settles
	 * @param async whether to settle without waiting for the store
	 * @return completes when the store has answered (a failed settlement is dropped)
	 */
	public CompletionStage<Void> settle(int status, Function<String, String> headers, CostSettlement costs,
			boolean async) {
		List<Pending> taken;
		synchronized (this) {
			taken = this.pending;
			this.pending = new ArrayList<>(0);
		}
		// without headers the response ended early: only a reported cost is known, and
		// without one the call costs its reservation, or nothing when so configured
		boolean ended = headers == null;
		long reported = ended ? costs.failedCallCost(UsageReports.reported(this.usage))
				: UsageReports.reported(this.usage);
		if (ended && reported == CostExpressions.UNKNOWN) {
			// nothing settles later either: the reservation stands
			return DONE;
		}
		Map<RateLimitResult, CostSettlement.Settlement> byDecision = new IdentityHashMap<>(2);
		for (Pending limit : taken) {
			if (limit.result == null || (!ended && !limit.definition.countStatuses().counts(status))) {
				continue;
			}
			long actual = reported;
			String header = limit.definition.settledCost().actualCostHeader();
			if (actual == UsageReports.UNREPORTED && header != null && !ended) {
				String value = headers.apply(header);
				actual = (value != null) ? CostExpressions.cost(value) : CostExpressions.UNKNOWN;
			}
			if (actual == CostExpressions.UNKNOWN) {
				actual = limit.fromResult;
			}
			byDecision.computeIfAbsent(limit.result, (result) -> new CostSettlement.Settlement())
				.add(limit.acquisitions, limit.decided, limit.result, List.of(), actual);
		}
		if (byDecision.isEmpty()) {
			return DONE;
		}
		List<CompletableFuture<Void>> settled = new ArrayList<>(byDecision.size());
		byDecision.forEach((result, settlement) -> settled.add(
				costs.settle(settlement.acquisitions, settlement.costs(), result, async).toCompletableFuture()));
		return (settled.size() == 1) ? settled.get(0) : CompletableFuture.allOf(settled.toArray(new CompletableFuture<?>[0]));
	}

	private static boolean containsInstance(List<Acquisition> acquisitions, Acquisition wanted) {
		for (Acquisition acquisition : acquisitions) {
			if (acquisition == wanted) {
				return true;
			}
		}
		return false;
	}

	/** One settling limit of the request, and what is known of its cost so far. */
	private static final class Pending {

		final List<Acquisition> acquisitions;

		final LimitDefinition definition;

		long fromResult = CostExpressions.UNKNOWN;

		List<Acquisition> decided;

		RateLimitResult result;

		Pending(List<Acquisition> acquisitions, LimitDefinition definition) {
			this.acquisitions = List.copyOf(acquisitions);
			this.definition = definition;
		}

	}

	/**
	 * Settles the costs of a streamed response as its stream ends, found in the Reactor
	 * context of a reactive handler's stream under its class.
	 */
	@FunctionalInterface
	public interface StreamEnd {

		/**
		 * Settles the request's costs, once.
		 * @param completed whether the stream completed; otherwise it failed or its client
		 * cancelled it, and only a reported cost settles
		 * @return completes when the store has answered, on the thread the stream may go on
		 */
		CompletionStage<Void> ended(boolean completed);

	}

	/**
	 * Finds the costs of a request in its web stack's attributes.
	 */
	@FunctionalInterface
	public interface Attribute {

		/**
		 * The costs of the current request.
		 * @param create whether to create them when the request has none yet
		 * @return the costs, or {@code null} when it has none and {@code create} is false
		 */
		RequestCosts find(boolean create);

	}

}
