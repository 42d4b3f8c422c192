package io.github.ratelimit.internal.aop;

import java.lang.reflect.Method;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Future;

import org.aopalliance.intercept.MethodInterceptor;
import org.aopalliance.intercept.MethodInvocation;

import org.springframework.aop.interceptor.ExposeInvocationInterceptor;
import org.springframework.aop.support.AopUtils;

import io.github.ratelimit.PlanResolver;
import io.github.ratelimit.RateLimitExceededException;
import io.github.ratelimit.RateLimitUsage;
import io.github.ratelimit.internal.core.LimitDefinition;
import io.github.ratelimit.internal.core.RateLimitWaiter;
import io.github.ratelimit.internal.core.RateLimiter;
import io.github.ratelimit.internal.core.UsageReports;
import io.github.ratelimit.internal.pipeline.AnnotatedLimit;
import io.github.ratelimit.internal.pipeline.CallContext;
import io.github.ratelimit.internal.pipeline.CallContextProvider;
import io.github.ratelimit.internal.pipeline.CallOutcomes;
import io.github.ratelimit.internal.pipeline.CostExpressions;
import io.github.ratelimit.internal.pipeline.CostSettlement;
import io.github.ratelimit.internal.pipeline.CostSettlement.SettledCall;
import io.github.ratelimit.internal.pipeline.DetachedCallContext;
import io.github.ratelimit.internal.pipeline.MethodLimits;
import io.github.ratelimit.internal.pipeline.OutcomeSettlement;
import io.github.ratelimit.internal.pipeline.OutcomeSettlement.CountedCall;
import io.github.ratelimit.store.Acquisition;
import io.github.ratelimit.store.RateLimitResult;

/**
 * Enforces {@code @RateLimited} around method calls on any Spring bean. Every limit of
 * the call (and, for a web handler, the route limits waiting for the authenticated
 * principal) is decided in one store call; a rejection throws
 * {@link RateLimitExceededException}.
 * <p>
 * A call whose limits set a {@code maxWait} waits up to the longest of them for its
 * permit (through a {@link RateLimitWaiter}). A controller method waits only for limits
 * whose own annotation sets {@code maxWait}, so a policy shared with a background job
 * never holds servlet threads by itself. Methods returning a {@link CompletionStage} (or
 * {@link CompletableFuture}) do not hold the calling thread: they are invoked on the
 * waiter's scheduler once the permit is there, and a rejection after waiting completes
 * the returned future exceptionally; cancelling it gives the reservation back.
 * <p>
 * Limits that count only some outcomes ({@code countExceptions}, {@code countWhen}) take
 * their permit before the call as every limit does, and are given it back after the call
 * (when the returned future or publisher completes) if its outcome does not count. On
 * web handlers the final response status decides instead ({@code countStatuses}), once
 * the response is final.
 * <p>
 * A call whose caller cancels once it runs (a reactive subscriber, a returned future
 * cancelled) is not settled: its outcome is never known, so limits counting some
 * outcomes count it; and its work may go on after the cancel (cancelling a
 * {@code Mono.fromCallable} on {@code boundedElastic} does not stop a callable that
 * ignores interrupts, {@code CompletableFuture.cancel} interrupts nothing), so its
 * concurrency permits are held until their lease expires rather than let more calls run
 * than the limit allows.
 * <p>
 * Limits that settle costs after the call ({@code estimate}, {@code actualCost}) reserve
 * their estimate and, once the call ends, settle in one store call what it reported to its
 * {@code RateLimitUsage} (current on the calling thread while it runs, or in a
 * {@code Mono}'s context), else what {@code actualCost} says of its result; a web
 * handler's settle once its response is final instead.
 */
public final class RateLimitedMethodInterceptor implements MethodInterceptor {

	private final MethodLimits limits;

	private final RateLimiter limiter;

	private final CallContextProvider contexts;

	private final RateLimitWaiter waiter;

	private final PlanResolver plans;

	private final OutcomeSettlement settlement;

	private final CostSettlement costs;

	private RateLimitedMethodInterceptor(Builder builder) {
		this.limits = builder.limits;
		this.limiter = builder.limiter;
		this.contexts = builder.contexts;
		this.waiter = builder.waiter;
		this.plans = builder.plans;
		this.settlement = new OutcomeSettlement(builder.limiter);
		this.costs = new CostSettlement(builder.limiter, new CostExpressions(), builder.failedCallsKeepReservation);
	}

	/**
	 * Starts an interceptor of calls outside web requests, whose limits have no plans.
	 * @param limits the limits of annotated methods
	 * @param limiter decides
	 * @param waiter waits for permits of calls whose limits set a {@code maxWait}
	 * @return the builder
	 */
	public static Builder builder(MethodLimits limits, RateLimiter limiter, RateLimitWaiter waiter) {
		return new Builder(limits, limiter, waiter);
	}

	@Override
	public Object invoke(MethodInvocation invocation) throws Throwable {
		Class<?> targetClass = (invocation.getThis() != null) ? AopUtils.getTargetClass(invocation.getThis()) : null;
		List<AnnotatedLimit> limits = this.limits.find(invocation.getMethod(), targetClass);
		if (limits.isEmpty()) {
			return invocation.proceed();
		}
		Method method = AopUtils.getMostSpecificMethod(invocation.getMethod(), targetClass);
		if (this.contexts.limitsElsewhere(method)) {
			// a reactive handler's limits settle once its response commits, maybe from its value
			Object value = invocation.proceed();
			if (ReactiveCalls.returnsFlux(method)) {
				// a stream settles as it ends, maybe from its last element
				return ReactiveCalls.settlingStream(method, invocation, value, this.costs);
			}
			return (ReactiveCalls.returnsMono(method) && this.limits.settleOverResult(limits))
					? ReactiveCalls.reportingValue(method, invocation, value, this.costs) : value;
		}
		if (ReactiveCalls.returnsPublisher(method)) {
			// each subscription is one call, decided when it subscribes, for its subscriber's principal
			return ReactiveCalls.limited(method, invocation, (principal) -> bind(limits, method,
					invocation.getArguments(), DetachedCallContext.of(principal), null), this.limiter, this.waiter, this);
		}
		CallContext context = this.contexts.current();
		String route = context.handlerRouteName(method);
		Bound bound = bind(limits, method, invocation.getArguments(), context, route);
		List<Acquisition> acquisitions = bound.acquisitions();
		Duration maxWait = bound.maxWait();
		if (!maxWait.isZero()) {
			boolean handler = route != null;
			return returnsCompletionStage(method) ? invokeWhenPermitted(invocation, bound, maxWait, context, handler)
					: invokeAfterWaiting(invocation, bound, maxWait, context, handler);
		}
		RateLimitResult result = this.limiter.acquire(acquisitions);
		if (!result.allowed()) {
			context.rejected(result, route != null);
			throw new RateLimitExceededException(result.decisions());
		}
		context.allowed(acquisitions, result);
		result.awaitDelay();
		return proceedCounting(invocation, bound, result);
	}

	/**
	 * Proceeds, then gives back the permits of limits that do not count the call's
	 * outcome: when it returns or throws, or, for a returned {@link CompletionStage}, when
	 * that completes.
	 */
	private Object proceedCounting(MethodInvocation invocation, Bound bound, RateLimitResult result)
			throws Throwable {
		if (!bound.settlesAfter()) {
			return invocation.proceed();
		}
		Object value;
		RateLimitUsage previous = (bound.usage() != null) ? UsageReports.bind(bound.usage()) : null;
		try {
			value = invocation.proceed();
		}
		catch (Throwable ex) {
			settleThrown(bound, result, ex);
			throw ex;
		}
		finally {
			if (bound.usage() != null) {
				UsageReports.bind(previous);
			}
		}
		if (value instanceof CompletionStage<?> stage && returnsCompletionStage(invocation.getMethod())) {
			// observed on the side: the caller keeps the very future the method returned
			stage.whenComplete((completed, failure) -> {
				if (isCancelled(stage)) {
					// the caller went away, maybe not the work: the call keeps its permits
					settleCancelled(bound, result, false);
					return;
				}
				if (failure != null) {
					settleThrown(bound, result, unwrap(failure));
				}
				else {
					settleReturned(bound, result, invocation, completed);
				}
			});
			return value;
		}
		settleReturned(bound, result, invocation, value);
		return value;
	}

	/** Gives back the permits of limits that do not count a call that threw. */
	void settleThrown(Bound bound, RateLimitResult result, Throwable failure) {
		settleThrown(bound, result, failure, false);
	}

	/**
	 * Gives back the permits of limits that do not count a call that threw; without
	 * waiting for the store when {@code async} (a reactive call, maybe on an event loop).
	 */
	void settleThrown(Bound bound, RateLimitResult result, Throwable failure, boolean async) {
		List<Acquisition> refunded = this.settlement.settleThrown(bound.outcomes(), bound.acquisitions(), result,
				failure, async);
		if (!bound.settled().isEmpty()) {
			this.costs.settleEnded(bound.settled(), bound.acquisitions(), result, refunded, bound.usage(), async);
		}
	}

	/**
	 * Settles a call whose caller cancelled it: what it reported, if anything; its
	 * outcome is unknown, so limits counting outcomes keep their permits.
	 */
	void settleCancelled(Bound bound, RateLimitResult result, boolean async) {
		if (!bound.settled().isEmpty()) {
			this.costs.settleEnded(bound.settled(), bound.acquisitions(), result, List.of(), bound.usage(), async);
		}
	}

	/**
	 * Settles a {@code Flux} call that completed: limits counting outcomes see no result,
	 * limits settling their cost read {@code #result} as the last element it emitted.
	 */
	void settleStreamed(Bound bound, RateLimitResult result, MethodInvocation invocation, Object last) {
		List<Acquisition> refunded = this.settlement.settleReturned(bound.outcomes(), bound.acquisitions(), result,
				invocation.getMethod(), invocation.getArguments(), null, true);
		if (!bound.settled().isEmpty()) {
			this.costs.settleReturned(bound.settled(), bound.acquisitions(), result, refunded, bound.usage(),
					invocation.getMethod(), invocation.getArguments(), last, true);
		}
	}

	/** Gives back the permits of limits that do not count a call that returned {@code value}. */
	void settleReturned(Bound bound, RateLimitResult result, MethodInvocation invocation, Object value) {
		settleReturned(bound, result, invocation, value, false);
	}

	/**
	 * Gives back the permits of limits that do not count a call that returned
	 * {@code value}; without waiting for the store when {@code async}.
	 */
	void settleReturned(Bound bound, RateLimitResult result, MethodInvocation invocation, Object value,
			boolean async) {
		if (bound.handler() != null) {
			// a handler settles once its response is final, maybe from what it returned
			bound.handler().handlerReturned(invocation.getMethod(), invocation.getArguments(), value);
		}
		List<Acquisition> refunded = this.settlement.settleReturned(bound.outcomes(), bound.acquisitions(), result,
				invocation.getMethod(), invocation.getArguments(), value, async);
		if (!bound.settled().isEmpty()) {
			this.costs.settleReturned(bound.settled(), bound.acquisitions(), result, refunded, bound.usage(),
					invocation.getMethod(), invocation.getArguments(), value, async);
		}
	}

	/** Binds every limit of a call to its identity and plan, with the longest wait they allow. */
	private Bound bind(List<AnnotatedLimit> limits, Method method, Object[] args, CallContext context, String route) {
		List<Acquisition> acquisitions = new ArrayList<>(limits.size() + 2);
		List<CountedCall> outcomes = List.of();
		List<SettledCall> settled = List.of();
		Duration maxWait = Duration.ZERO;
		String plan = null;
		boolean planResolved = false;
		boolean handlerSettles = false;
		for (AnnotatedLimit limit : limits) {
			LimitDefinition definition = this.limits.definition(limit, limit.nameFor(route, method));
			String identity = this.limits.identity(limit, definition, method, args, context);
			if (!planResolved && !definition.plans().isEmpty()) {
				plan = this.plans.resolve(context.principal());
				planResolved = true;
			}
			List<Acquisition> limited = this.costs.reserve(definition, identity, plan, method, args,
					context.request());
			if (route != null) {
				// a handler's outcome is its response status, known once the response is final
				context.countOnly(limited, definition.countStatuses());
				if (definition.settles()) {
					context.settleOnly(limited, definition);
					handlerSettles = true;
				}
			}
			else if (definition.settles()) {
				settled = (settled.isEmpty()) ? new ArrayList<>(2) : settled;
				settled.add(new SettledCall(limited, definition));
			}
			if (route == null) {
				CallOutcomes counted = CallOutcomes.of(limit, definition);
				if (!counted.countsAll()) {
					outcomes = (outcomes.isEmpty()) ? new ArrayList<>(2) : outcomes;
					outcomes.add(new CountedCall(limited, counted));
				}
			}
			acquisitions.addAll(limited);
			// a handler waits only when its own annotation asks for it
			if ((route == null || limit.settings().maxWait() != null) && definition.maxWait().compareTo(maxWait) > 0) {
				maxWait = definition.maxWait();
			}
		}
		if (route != null) {
			acquisitions.addAll(context.takeDeferredAcquisitions());
		}
		// a handler reports to its request's usage, settled once the response is final
		RateLimitUsage usage = !settled.isEmpty() ? UsageReports.open() : handlerSettles ? context.usage() : null;
		return new Bound(acquisitions, maxWait, outcomes, settled, usage, handlerSettles ? context : null);
	}

	/**
	 * The limits of one call bound to its identities.
	 *
	 * @param acquisitions the acquisitions
	 * @param maxWait the longest wait for a permit
	 * @param outcomes the limits among them that count only some outcomes of the call
	 * @param settled the limits among them that settle the call's actual cost
	 * @param usage where the call reports its actual cost, {@code null} when no limit of
	 * the call settles
	 * @param handler the context of a web handler whose limits settle once its response is
	 * final, told what the handler returned; otherwise {@code null}
	 */
	record Bound(List<Acquisition> acquisitions, Duration maxWait, List<CountedCall> outcomes,
			List<SettledCall> settled, RateLimitUsage usage, CallContext handler) {

		/** Whether something is given back or settled once the call ends. */
		boolean settlesAfter() {
			return !this.outcomes.isEmpty() || !this.settled.isEmpty() || this.handler != null;
		}

	}

	private Object invokeAfterWaiting(MethodInvocation invocation, Bound bound, Duration maxWait,
			CallContext context, boolean handler) throws Throwable {
		List<Acquisition> acquisitions = bound.acquisitions();
		RateLimitResult result = this.waiter.acquire(acquisitions, maxWait);
		if (!result.allowed()) {
			context.rejected(result, handler);
			throw new RateLimitExceededException(result.decisions());
		}
		context.allowed(acquisitions, result);
		return proceedCounting(invocation, bound, result);
	}

	private Object invokeWhenPermitted(MethodInvocation invocation, Bound bound, Duration maxWait,
			CallContext context, boolean handler) throws Throwable {
		List<Acquisition> acquisitions = bound.acquisitions();
		CompletableFuture<RateLimitResult> permit = this.waiter.acquireAsync(acquisitions, maxWait);
		if (permit.isDone()) {
			// no wait: decided on this thread, answered as without maxWait
			RateLimitResult result;
			try {
				result = permit.join();
			}
			catch (CompletionException ex) {
				throw unwrap(ex);
			}
			if (!result.allowed()) {
				context.rejected(result, handler);
				throw new RateLimitExceededException(result.decisions());
			}
			context.allowed(acquisitions, result);
			return proceedCounting(invocation, bound, result);
		}
		CompletableFuture<Object> call = new CompletableFuture<>();
		permit.whenComplete((result, failure) -> {
			if (failure != null) {
				call.completeExceptionally(unwrap(failure));
			}
			else if (!result.allowed()) {
				context.rejected(result, handler);
				call.completeExceptionally(new RateLimitExceededException(result.decisions()));
			}
			else if (call.isDone()) {
				// cancelled as the slot came: the method does not run, so its permit is not used
				this.limiter.refund(acquisitions, result);
			}
			else {
				context.allowed(acquisitions, result);
				proceedInto(invocation, call, bound, result);
			}
		});
		call.whenComplete((value, failure) -> {
			if (call.isCancelled()) {
				permit.cancel(false);
			}
		});
		return call;
	}

	/** Proceeds on this (scheduler) thread, exposing the invocation to advice further down the chain. */
	private void proceedInto(MethodInvocation invocation, CompletableFuture<Object> call, Bound bound,
			RateLimitResult permit) {
		RateLimitUsage previous = (bound.usage() != null) ? UsageReports.bind(bound.usage()) : null;
		try {
			Object value = ExposeInvocationInterceptor.INSTANCE.invoke(invocation);
			if (value == null) {
				settleReturned(bound, permit, invocation, null);
				call.complete(null);
				return;
			}
			CompletionStage<?> stage = (CompletionStage<?>) value;
			stage.whenComplete((result, failure) -> {
				if (failure != null) {
					if (!isCancelled(stage)) {
						settleThrown(bound, permit, unwrap(failure));
					}
					else {
						settleCancelled(bound, permit, false);
					}
					call.completeExceptionally(unwrap(failure));
				}
				else {
					settleReturned(bound, permit, invocation, result);
					call.complete(result);
				}
			});
		}
		catch (Throwable ex) {
			settleThrown(bound, permit, ex);
			call.completeExceptionally(ex);
		}
		finally {
			if (bound.usage() != null) {
				UsageReports.bind(previous);
			}
		}
	}

	/** Whether a returned stage was cancelled: its outcome is unknown, its work maybe still running. */
	private static boolean isCancelled(CompletionStage<?> stage) {
		return stage instanceof Future<?> future && future.isCancelled();
	}

	private static boolean returnsCompletionStage(Method method) {
		Class<?> type = method.getReturnType();
		return CompletionStage.class.isAssignableFrom(type) && type.isAssignableFrom(CompletableFuture.class);
	}

	private static Throwable unwrap(Throwable failure) {
		return (failure instanceof CompletionException && failure.getCause() != null) ? failure.getCause() : failure;
	}

	/** Builds a {@link RateLimitedMethodInterceptor}. */
	public static final class Builder {

		private final MethodLimits limits;

		private final RateLimiter limiter;

		private final RateLimitWaiter waiter;

		private CallContextProvider contexts = () -> DetachedCallContext.INSTANCE;

		private PlanResolver plans = (principal) -> null;

		private boolean failedCallsKeepReservation = true;

		private Builder(MethodLimits limits, RateLimiter limiter, RateLimitWaiter waiter) {
			this.limits = limits;
			this.limiter = limiter;
			this.waiter = waiter;
		}

		/** Sets what tells whether a call runs in a web request. */
		public Builder contexts(CallContextProvider contexts) {
			this.contexts = contexts;
			return this;
		}

		/** Sets how the plan of a call is found, for limits whose policy has plans. */
		public Builder plans(PlanResolver plans) {
			this.plans = plans;
			return this;
		}

		/** Sets whether a call that fails or is cancelled, reporting no cost, keeps its reservation. */
		public Builder failedCallsKeepReservation(boolean keep) {
			this.failedCallsKeepReservation = keep;
			return this;
		}

		/**
		 * Builds the interceptor.
		 * @return the interceptor
		 */
		public RateLimitedMethodInterceptor build() {
			return new RateLimitedMethodInterceptor(this);
		}

	}

}
