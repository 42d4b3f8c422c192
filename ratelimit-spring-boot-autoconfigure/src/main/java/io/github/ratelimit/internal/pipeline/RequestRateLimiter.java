package io.github.ratelimit.internal.pipeline;

import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.BiConsumer;
import java.util.function.BooleanSupplier;
import java.util.function.Function;

import io.github.ratelimit.KeySource;
import io.github.ratelimit.PlanResolver;
import io.github.ratelimit.RateLimitRequest;
import io.github.ratelimit.RateLimitUnavailableException;
import io.github.ratelimit.internal.core.LimitDefinition;
import io.github.ratelimit.internal.core.RateLimiter;
import io.github.ratelimit.store.Acquisition;
import io.github.ratelimit.store.RateLimitDecision;
import io.github.ratelimit.store.RateLimitResult;

/**
 * The request path of every web stack, one entry point over its parts: the
 * {@link RouteMatcher} matches route limits against the normalised path, the
 * {@link LimitBinder} binds limits to the identity and plan of a request, the
 * {@link StageDecider} decides each stage all-or-nothing across stages, the
 * {@link VerdictRenderer} renders the answer and the {@link OutcomeSettlement} gives back
 * what a request's outcome does not count. Web stacks adapt their request type to
 * {@link RateLimitRequest}, keep one {@link RequestLimits} per request (none for a
 * request whose route stage nothing can follow, see {@link #decidesAlone}) and write what
 * the {@link Verdict} says.
 */
public final class RequestRateLimiter {

	private final RouteMatcher routes;

	private final LimitBinder binder;

	private final StageDecider decider;

	private final VerdictRenderer renderer;

	private final OutcomeSettlement settlement;

	private final CostSettlement costs;

	private final boolean decidesOnCallingThread;

	private final BooleanSupplier callLimits;

	private RequestRateLimiter(Builder builder) {
		this.routes = new RouteMatcher(builder.routes);
		this.binder = new LimitBinder(builder.identities, builder.plans);
		this.renderer = new VerdictRenderer(builder.limiter, builder.responses);
		this.decider = new StageDecider(builder.limiter, this.renderer);
		this.settlement = new OutcomeSettlement(builder.limiter);
		this.costs = new CostSettlement(builder.limiter, new CostExpressions(), builder.failedCallsKeepReservation);
		this.decidesOnCallingThread = builder.limiter.decidesOnCallingThread();
		this.callLimits = builder.callLimits;
	}

	/**
	 * Whether the store decides on the calling thread however it is asked (in memory), so
	 * that an event loop may decide a route stage with
	 * {@link #decideRouteStage(RateLimitRequest, List, RequestLimits)}.
	 * @return whether deciding never leaves the calling thread
	 */
	public boolean decidesOnCallingThread() {
		return this.decidesOnCallingThread;
	}

	/**
	 * Starts a request limiter with no route limits.
	 * @param limiter decides
	 * @param responses renders headers and problem responses
	 * @return the builder
	 */
	public static Builder builder(RateLimiter limiter, RateLimitResponses responses) {
		return new Builder(limiter, responses);
	}

	/**
	 * Whether any route limit is configured.
	 * @return whether there are route limits
	 */
	public boolean hasRoutes() {
		return this.routes.hasRoutes();
	}

	/**
	 * The route limits matching a request (see {@link RouteMatcher#match}).
	 * @param request the request
	 * @return the matching route limits, in configuration order; not to be modified
	 */
	public List<RouteLimit> matchRoutes(RateLimitRequest request) {
		return this.routes.match(request);
	}

	/**
	 * The first stage of a request, before authentication: binds the matching route limits
	 * that need no principal and leaves those keyed on the principal for the handler.
	 * @param request the request
	 * @param state the request's state
	 * @return the acquisitions to decide now, empty when none
	 */
	public List<Acquisition> routeStage(RateLimitRequest request, RequestLimits state) {
		return this.binder.routeStage(request, this.routes.match(request), state);
	}

	/**
	 * The first stage of a request as {@link #routeStage(RateLimitRequest, RequestLimits)},
	 * for route limits matched already: a web stack creates a request's state only once
	 * some route matches it.
	 * @param request the request
	 * @param matched the route limits it matches ({@link #matchRoutes})
	 * @param state the request's state
	 * @return the acquisitions to decide now, empty when none
	 */
	public List<Acquisition> routeStage(RateLimitRequest request, List<RouteLimit> matched, RequestLimits state) {
		return this.binder.routeStage(request, matched, state);
	}

	/**
	 * Decides the first stage of a request on the calling thread, as
	 * {@link #routeStage(RateLimitRequest, List, RequestLimits)} and then
	 * {@link #decide} would: the usual stage, one route limit keyed without the principal,
	 * with no candidate and counting every status, is decided in place, without
	 * acquisitions, results or decision values.
	 * @param request the request
	 * @param matched the route limits it matches ({@link #matchRoutes})
	 * @param state the request's state, with nothing recorded yet
	 * @return the verdict, or {@code null} when nothing is decided now (every limit waits
	 * for the principal)
	 */
	public Verdict decideRouteStage(RateLimitRequest request, List<RouteLimit> matched, RequestLimits state) {
		if (matched.size() == 1 && state.isEmpty()) {
			LimitDefinition definition = matched.get(0).definition();
			if (LimitBinder.bindsAlone(definition)) {
				return this.decider.decideSingle(definition.limit(), this.binder.identity(definition, request),
						definition.cost(), state);
			}
		}
		List<Acquisition> now = this.binder.routeStage(request, matched, state);
		return now.isEmpty() ? null : this.decider.decide(now, state);
	}

	/**
	 * Whether the first stage of a request with no state yet, matching {@code matched},
	 * leaves nothing to do afterwards, so that it is decided with
	 * {@link #decideAlone} and the request keeps no state: one route limit keyed without
	 * the principal, with no candidate, counting every status (no permit held, nothing to
	 * settle), and no limited call that could join the request and reject it (which would
	 * give the stage back and list its decision).
	 * @param matched the route limits the request matches ({@link #matchRoutes})
	 * @return whether the stage is decided alone
	 */
	public boolean decidesAlone(List<RouteLimit> matched) {
		return matched.size() == 1 && LimitBinder.bindsAlone(matched.get(0).definition())
				&& !this.callLimits.getAsBoolean();
	}

	/**
	 * Decides the first stage of a request as
	 * {@link #decideRouteStage(RateLimitRequest, List, RequestLimits)} and then
	 * {@link #writeHeaders} would, for a stage {@link #decidesAlone} says leaves nothing to
	 * do: the headers of a stage that proceeds are written at once, from the decision the
	 * store wrote for this thread, so that an admitted request allocates nothing.
	 * @param request the request
	 * @param route the one route limit it matches
	 * @param headers receives each header when the request proceeds; a value is valid
	 * until it returns
	 * @return the verdict
	 */
	public Verdict decideAlone(RateLimitRequest request, RouteLimit route, RateLimitResponses.HeaderSink headers) {
		LimitDefinition definition = route.definition();
		return this.decider.decideAlone(definition.limit(), this.binder.identity(definition, request),
				definition.cost(), headers);
	}

	/**
	 * Binds a limit, and its candidate if it has one, to the identity and plan of a
	 * request.
	 * @param definition the limit
	 * @param request the request
	 * @return the acquisitions
	 */
	public List<Acquisition> bindAll(LimitDefinition definition, RateLimitRequest request) {
		return this.binder.bindAll(definition, request);
	}

	/**
	 * The identity of a request for a limit.
	 * @param definition the limit
	 * @param request the request
	 * @return the identity
	 */
	public String identity(LimitDefinition definition, RateLimitRequest request) {
		return this.binder.identity(definition, request);
	}

	/**
	 * The identity of a request for a limit's key chain.
	 * @param limit the limit name
	 * @param keyChain the key sources in order
	 * @param request the request
	 * @return the identity
	 */
	public String identity(String limit, List<KeySource> keyChain, RateLimitRequest request) {
		return this.binder.identity(limit, keyChain, request);
	}

	/**
	 * Binds the route limits that waited for the principal; taken once.
	 * @param request the request, now authenticated
	 * @param state the request's state
	 * @return their acquisitions, empty when none waited or they were taken already
	 */
	public List<Acquisition> takeDeferred(RateLimitRequest request, RequestLimits state) {
		return this.binder.takeDeferred(request, state);
	}

	/**
	 * Decides one stage of a request on the calling thread (see {@link StageDecider#decide}).
	 * @param acquisitions the acquisitions of this stage
	 * @param state the request's state
	 * @return the verdict
	 */
	public Verdict decide(List<Acquisition> acquisitions, RequestLimits state) {
		return this.decider.decide(acquisitions, state);
	}

	/**
	 * Decides one stage of a request without holding the calling thread, for event loops
	 * (see {@link StageDecider#decideAsync}).
	 * @param acquisitions the acquisitions of this stage
	 * @param state the request's state
	 * @param maxWaitMicros longest wait for a permit; 0 never waits
	 * @return the verdict
	 */
	public CompletionStage<Verdict> decideAsync(List<Acquisition> acquisitions, RequestLimits state,
			long maxWaitMicros) {
		return this.decider.decideAsync(acquisitions, state, maxWaitMicros);
	}

	/**
	 * Decides one stage of a request without holding the calling thread, telling the
	 * request's costs which decision admitted the limits that settle.
	 * @param acquisitions the acquisitions of this stage
	 * @param state the request's state
	 * @param maxWaitMicros longest wait for a permit; 0 never waits
	 * @param costs the request's costs, or {@code null} when nothing settles
	 * @return the verdict
	 */
	public CompletionStage<Verdict> decideAsync(List<Acquisition> acquisitions, RequestLimits state,
			long maxWaitMicros, RequestCosts costs) {
		return this.decider.decideAsync(acquisitions, state, maxWaitMicros, costs);
	}

	/**
	 * What a decided stage comes to (see {@link StageDecider#verdict}).
	 * @param acquisitions the acquisitions of the stage
	 * @param result their decisions
	 * @param state the request's state
	 * @return the verdict
	 */
	public Verdict verdict(List<Acquisition> acquisitions, RateLimitResult result, RequestLimits state) {
		return this.decider.verdict(acquisitions, result, state);
	}

	/**
	 * Records an admitted stage decided elsewhere (by the method interceptor of a handler).
	 * @param acquisitions what was acquired
	 * @param result the decisions
	 * @param state the request's state
	 */
	public void allowed(List<Acquisition> acquisitions, RateLimitResult result, RequestLimits state) {
		this.decider.allowed(acquisitions, result, state);
	}

	/**
	 * Records a rejected stage decided elsewhere and, when asked, gives back what earlier
	 * stages consumed.
	 * @param result the decisions
	 * @param state the request's state
	 * @param refundEarlierStages whether the earlier stages are given back
	 */
	public void rejected(RateLimitResult result, RequestLimits state, boolean refundEarlierStages) {
		this.decider.rejected(result, state, refundEarlierStages);
	}

	/**
	 * The {@code 429} for a request, with every decision made for it.
	 * @param state the request's state, or {@code null} when no stage recorded anything
	 * @param decisions decisions of the rejecting stage, if not recorded yet
	 * @return the response to write
	 */
	public ProblemResponse rejection(RequestLimits state, List<RateLimitDecision> decisions) {
		return this.renderer.rejection(state, decisions);
	}

	/**
	 * The {@code 503} for fail-closed limits whose store is down, giving back what earlier
	 * stages consumed.
	 * @param state the request's state, or {@code null} when no stage recorded anything
	 * @param unavailable what could not be decided
	 * @return the response to write
	 */
	public ProblemResponse unavailable(RequestLimits state, RateLimitUnavailableException unavailable) {
		return this.renderer.unavailable(state, unavailable);
	}

	/**
	 * The {@code 503} as {@link #unavailable}, giving back without waiting for the store:
	 * for event loops.
	 * @param state the request's state, or {@code null} when no stage recorded anything
	 * @param unavailable what could not be decided
	 * @return the response to write
	 */
	public ProblemResponse unavailableAsync(RequestLimits state, RateLimitUnavailableException unavailable) {
		return this.renderer.unavailableAsync(state, unavailable);
	}

	/**
	 * The rate limit headers for every decision made for a request so far.
	 * @param state the request's state
	 * @param headers receives each header
	 */
	public void headers(RequestLimits state, BiConsumer<String, String> headers) {
		this.renderer.headers(state, headers);
	}

	/**
	 * The rate limit headers as {@link #headers}, each value handed as text valid until
	 * the sink returns: the usual request renders them without allocating, and a web
	 * stack makes the one string its response takes.
	 * @param state the request's state
	 * @param headers receives each header
	 */
	public void writeHeaders(RequestLimits state, RateLimitResponses.HeaderSink headers) {
		this.renderer.writeHeaders(state, headers);
	}

	/**
	 * Handles a request whose client went away (see {@link OutcomeSettlement#abandon}).
	 * @param state the request's state
	 */
	public void abandon(RequestLimits state) {
		this.settlement.abandon(state);
	}

	/**
	 * Gives back what limits that do not count the final status of a request consumed
	 * for it (see {@link OutcomeSettlement#settle}).
	 * @param state the request's state, or {@code null} when nothing limited it
	 * @param status the final response status
	 */
	public void settle(RequestLimits state, int status) {
		this.settlement.settle(state, status);
	}

	/**
	 * Gives back as {@link #settle} without blocking: for event loops.
	 * @param state the request's state, or {@code null} when nothing limited it
	 * @param status the final response status
	 * @return completes when the store has answered every refund (a failed refund is
	 * dropped, never an error)
	 */
	public CompletionStage<Void> settleAsync(RequestLimits state, int status) {
		return this.settlement.settleAsync(state, status);
	}

	/**
	 * Gives back as {@link #settleAsync} only what limits counting some statuses took,
	 * leaving the permits concurrency limits hold until the call is over.
	 * @param state the request's state, or {@code null} when nothing limited it
	 * @param status the final response status
	 * @return completes when the store has answered every refund
	 */
	public CompletionStage<Void> settleCountedAsync(RequestLimits state, int status) {
		return this.settlement.settleCountedAsync(state, status);
	}

	/**
	 * Gives back the permits concurrency limits hold for a request whose call is over.
	 * @param state the request's state, or {@code null} when nothing limited it
	 * @return completes when the store has answered every refund
	 */
	public CompletionStage<Void> releaseHeldAsync(RequestLimits state) {
		return this.settlement.releaseHeldAsync(state);
	}

	/**
	 * Settles the actual cost of a request whose response is final (see
	 * {@link RequestCosts#settle}).
	 * @param costs the request's costs, or {@code null} when nothing settles
	 * @param status the final response status
	 * @param headers the value of a response header by name, or {@code null}
	 * @param async whether to settle without waiting for the store (an event loop)
	 * @return completes when the store has answered (a failed settlement is dropped)
	 */
	public CompletionStage<Void> settleCosts(RequestCosts costs, int status, Function<String, String> headers,
			boolean async) {
		return (costs != null) ? costs.settle(status, headers, this.costs, async)
				: CompletableFuture.completedFuture(null);
	}

	/**
	 * Settles the estimates and actual costs of limits, for handlers whose limits settle.
	 * @return the cost settlement
	 */
	public CostSettlement costs() {
		return this.costs;
	}

	/** Builds a {@link RequestRateLimiter}. */
	public static final class Builder {

		private final RateLimiter limiter;

		private final RateLimitResponses responses;

		private RequestIdentityResolver identities;

		private List<RouteLimit> routes = List.of();

		private PlanResolver plans;

		private BooleanSupplier callLimits = () -> true;

		private boolean failedCallsKeepReservation = true;

		private Builder(RateLimiter limiter, RateLimitResponses responses) {
			this.limiter = Objects.requireNonNull(limiter, "limiter must not be null");
			this.responses = Objects.requireNonNull(responses, "responses must not be null");
		}

		/**
		 * Sets how identities are found.
		 * @param identities finds identities
		 * @return this builder
		 */
		public Builder identities(RequestIdentityResolver identities) {
			this.identities = identities;
			return this;
		}

		/**
		 * Sets the route limits.
		 * @param routes the configured route limits, in configuration order
		 * @return this builder
		 */
		public Builder routes(List<RouteLimit> routes) {
			this.routes = List.copyOf(routes);
			return this;
		}

		/**
		 * Sets how the plan of a request is found, for limits whose policy has plans.
		 * @param plans finds plans
		 * @return this builder
		 */
		public Builder plans(PlanResolver plans) {
			this.plans = plans;
			return this;
		}

		/**
		 * Sets whether calls made while a request is handled may be limited (some method
		 * carries {@code @RateLimited}): their stages join the request's, so its route stage
		 * keeps a state for them. Asked per request; by default they may.
		 * @param callLimits whether limited calls may join a request
		 * @return this builder
		 */
		public Builder callLimits(BooleanSupplier callLimits) {
			this.callLimits = Objects.requireNonNull(callLimits, "callLimits must not be null");
			return this;
		}

		/** Sets whether a response that ends early, its handler having reported no cost, keeps its reservation. */
		public Builder failedCallsKeepReservation(boolean keep) {
			this.failedCallsKeepReservation = keep;
			return this;
		}

		/**
		 * Builds the request limiter.
		 * @return the request limiter
		 */
		public RequestRateLimiter build() {
			return new RequestRateLimiter(this);
		}

	}

}
