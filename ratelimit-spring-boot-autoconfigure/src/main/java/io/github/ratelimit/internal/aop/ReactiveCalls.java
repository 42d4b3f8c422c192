package io.github.ratelimit.internal.aop;

import java.lang.reflect.Method;
import java.security.Principal;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;

import org.aopalliance.intercept.MethodInvocation;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

import org.springframework.aop.ProxyMethodInvocation;
import org.springframework.security.core.context.ReactiveSecurityContextHolder;
import org.springframework.security.core.context.SecurityContext;
import org.springframework.util.ClassUtils;

import io.github.ratelimit.RateLimitExceededException;
import io.github.ratelimit.RateLimitUsage;
import io.github.ratelimit.internal.core.RateLimitWaiter;
import io.github.ratelimit.internal.core.RateLimiter;
import io.github.ratelimit.internal.pipeline.CostSettlement;
import io.github.ratelimit.internal.pipeline.OutcomeSettlement;
import io.github.ratelimit.internal.pipeline.RequestCosts;
import io.github.ratelimit.store.RateLimitResult;

/**
 * Limits methods returning a {@code Mono} or {@code Flux}: each subscription is one call,
 * decided when it subscribes (not when the publisher is assembled), for the principal of
 * the subscriber's reactive security context; a rejection is signalled as a
 * {@link RateLimitExceededException} error. A subscriber that cancels before the call
 * runs (while it is decided, or waits for its drain slot) gets back what was granted; one
 * that cancels once the call runs keeps every permit it took. A {@code Mono} call whose
 * limits settle their cost finds its {@link RateLimitUsage} in its Reactor context under
 * the key {@code RateLimitUsage.class}.
 */
final class ReactiveCalls {

	private static final boolean REACTOR_PRESENT = ClassUtils.isPresent("reactor.core.publisher.Mono",
			ReactiveCalls.class.getClassLoader());

	private static final boolean SECURITY_PRESENT = ClassUtils.isPresent(
			"org.springframework.security.core.context.ReactiveSecurityContextHolder",
			ReactiveCalls.class.getClassLoader());

	private ReactiveCalls() {
	}

	static boolean returnsPublisher(Method method) {
		return REACTOR_PRESENT && Reactor.isMonoOrFlux(method.getReturnType());
	}

	static boolean returnsFlux(Method method) {
		return REACTOR_PRESENT && Reactor.isFlux(method.getReturnType());
	}

	/**
	 * A reactive handler's {@code Flux} that settles the costs of its exchange (found in
	 * its Reactor context) as it ends rather than as the response commits: completed, over
	 * what it reported or its last element; failed or cancelled, over what it reported.
	 */
	static Object settlingStream(Method method, MethodInvocation invocation, Object value, CostSettlement costs) {
		return (value != null) ? Reactor.settlingStream(method, invocation, value, costs) : null;
	}

	static boolean returnsMono(Method method) {
		return REACTOR_PRESENT && Reactor.isMono(method.getReturnType());
	}

	/**
	 * A reactive handler's {@code Mono} that tells the costs of its exchange (found in its
	 * Reactor context) the value it emits, for limits settling over {@code #result}.
	 */
	static Object reportingValue(Method method, MethodInvocation invocation, Object value, CostSettlement costs) {
		return (value != null) ? Reactor.reportingValue(method, invocation, value, costs) : null;
	}

	static Object limited(Method method, MethodInvocation invocation,
			Function<Principal, RateLimitedMethodInterceptor.Bound> bind, RateLimiter limiter, RateLimitWaiter waiter,
			RateLimitedMethodInterceptor outcomes) {
		return Reactor.limited(method, invocation, bind, limiter, waiter, outcomes);
	}

	private static final class Reactor {

		static boolean isMono(Class<?> type) {
			return Mono.class.isAssignableFrom(type);
		}

		static Object reportingValue(Method method, MethodInvocation invocation, Object value, CostSettlement costs) {
			Mono<?> mono = (Mono<?>) value;
			Object[] args = invocation.getArguments();
			return Mono.deferContextual((context) -> {
				RequestCosts requestCosts = context.getOrDefault(RequestCosts.class, null);
				return (requestCosts != null) ? mono.doOnNext((emitted) -> requestCosts.returned(costs, method, args, emitted))
						: mono;
			});
		}

		static boolean isFlux(Class<?> type) {
			return Flux.class.isAssignableFrom(type);
		}

		@SuppressWarnings("unchecked")
		static Object settlingStream(Method method, MethodInvocation invocation, Object value, CostSettlement costs) {
			Flux<Object> flux = (Flux<Object>) value;
			Object[] args = invocation.getArguments();
			return Flux.deferContextual((context) -> {
				RequestCosts requestCosts = context.getOrDefault(RequestCosts.class, null);
				RequestCosts.StreamEnd end = context.getOrDefault(RequestCosts.StreamEnd.class, null);
				if (requestCosts == null || end == null) {
					return flux;
				}
				// subscribed before the response commits, which then leaves the settling to the end
				requestCosts.streams();
				AtomicReference<Object> last = new AtomicReference<>();
				// completed, the stream ends only once the store has answered, so that the
				// client's next call finds the settled cost
				Mono<Object> settled = Mono.defer(() -> {
					Object element = last.get();
					if (element != null) {
						requestCosts.returned(costs, method, args, element);
					}
					return Mono.fromCompletionStage(end.ended(true));
				}).then(Mono.empty());
				return flux.doOnNext(last::set)
					.concatWith(settled)
					.doOnError((failure) -> end.ended(false))
					.doOnCancel(() -> end.ended(false));
			});
		}

		static boolean isMonoOrFlux(Class<?> type) {
			return Mono.class.isAssignableFrom(type) || Flux.class.isAssignableFrom(type);
		}

		static Object limited(Method method, MethodInvocation invocation,
				Function<Principal, RateLimitedMethodInterceptor.Bound> bind, RateLimiter limiter,
				RateLimitWaiter waiter, RateLimitedMethodInterceptor outcomes) {
			Mono<Permit> permit = principal().flatMap((principal) -> {
				RateLimitedMethodInterceptor.Bound bound = bind.apply(principal.orElse(null));
				if (bound.maxWait().isZero()) {
					return Mono.defer(() -> {
						CompletableFuture<RateLimitResult> decided = limiter.acquireAsync(bound.acquisitions(), 0)
							.toCompletableFuture();
						// a subscriber gone before the decision arrived keeps nothing it grants; once the
						// decision is handed on, the call's own settlement gives back
						AtomicBoolean handedOn = new AtomicBoolean();
						return Mono.fromFuture(decided, true).doOnNext((result) -> handedOn.set(true)).doOnCancel(() -> {
							if (!handedOn.get()) {
								decided.thenAccept((result) -> giveBackAdmitted(limiter, bound, result));
							}
						}).map((result) -> new Permit(bound, result));
					});
				}
				// the waiter decides on the calling thread: keep that off the event loop
				return Mono.fromCompletionStage(() -> waiter.acquireAsync(bound.acquisitions(), bound.maxWait()))
					.subscribeOn(Schedulers.boundedElastic())
					.map((result) -> new Permit(bound, result));
			}).flatMap((taken) -> {
				RateLimitResult result = taken.result();
				if (!result.allowed()) {
					return Mono.error(new RateLimitExceededException(result.decisions()));
				}
				long delay = result.delayMicros();
				if (delay <= 0) {
					return Mono.just(taken);
				}
				// a subscriber gone while the call waits for its slot gives the slot back
				AtomicBoolean handedOn = new AtomicBoolean();
				return Mono.delay(Duration.ofNanos(delay * 1_000))
					.thenReturn(taken)
					.doOnNext((permitted) -> handedOn.set(true))
					.doOnCancel(() -> {
						if (!handedOn.get()) {
							giveBackAdmitted(limiter, taken.bound(), result);
						}
					});
			});
			if (Mono.class.isAssignableFrom(method.getReturnType())) {
				return permit.flatMap((taken) -> {
					Mono<Object> call = Mono.defer(() -> Mono.from(proceed(invocation)));
					if (!taken.bound().settlesAfter()) {
						return call;
					}
					// the outcome of a Mono is its value (null when empty) or its error. A subscriber
					// that cancels first leaves the outcome unknown and the work maybe running: the
					// call keeps its permits (see RateLimitedMethodInterceptor), and settles only a
					// cost it reported
					Mono<Object> settled = call
						.doOnSuccess((value) -> outcomes.settleReturned(taken.bound(), taken.result(), invocation,
								value, true))
						.doOnError((failure) -> outcomes.settleThrown(taken.bound(), taken.result(), failure, true))
						.doOnCancel(() -> outcomes.settleCancelled(taken.bound(), taken.result(), true));
					RateLimitUsage usage = taken.bound().usage();
					// the call reports its actual cost to the usage it finds in its context
					return (usage != null) ? settled.contextWrite((context) -> context.put(RateLimitUsage.class, usage))
							: settled;
				});
			}
			return permit.flatMapMany((taken) -> {
				Flux<Object> call = Flux.defer(() -> proceed(invocation));
				if (!taken.bound().settlesAfter()) {
					return call;
				}
				// a Flux's outcome is its completion (#result is null) or its error; a cancelled
				// call keeps its permits, as a Mono's does. Its cost settles as it ends: completed,
				// from what it reported or its last element (the final chunk of a chat
				// completion carries its usage); failed or cancelled, from what it reported
				AtomicReference<Object> last = new AtomicReference<>();
				Flux<Object> settled = call.doOnNext(last::set)
					.doOnComplete(() -> outcomes.settleStreamed(taken.bound(), taken.result(), invocation, last.get()))
					.doOnError((failure) -> outcomes.settleThrown(taken.bound(), taken.result(), failure, true))
					.doOnCancel(() -> outcomes.settleCancelled(taken.bound(), taken.result(), true));
				RateLimitUsage usage = taken.bound().usage();
				return (usage != null) ? settled.contextWrite((context) -> context.put(RateLimitUsage.class, usage))
						: settled;
			});
		}

		/** Gives back, without waiting, what a decision admitted for a call that will not run. */
		private static void giveBackAdmitted(RateLimiter limiter, RateLimitedMethodInterceptor.Bound bound,
				RateLimitResult result) {
			if (result.allowed()) {
				limiter.refundAsync(OutcomeSettlement.admitted(bound.acquisitions(), result), result);
			}
		}

		/** A call's limits with the decision that admitted it. */
		private record Permit(RateLimitedMethodInterceptor.Bound bound, RateLimitResult result) {
		}

		/** Proceeds on a copy of the invocation: every subscription runs the rest of the chain again. */
		@SuppressWarnings("unchecked")
		private static Publisher<Object> proceed(MethodInvocation invocation) {
			try {
				MethodInvocation copy = (invocation instanceof ProxyMethodInvocation proxy) ? proxy.invocableClone()
						: invocation;
				Object value = copy.proceed();
				return (value != null) ? (Publisher<Object>) value : Mono.empty();
			}
			catch (Throwable ex) {
				return Mono.error(ex);
			}
		}

		private static Mono<Optional<Principal>> principal() {
			if (!SECURITY_PRESENT) {
				return Mono.just(Optional.empty());
			}
			return SecurityPrincipal.current();
		}

	}

	/** Kept apart so that applications without Spring Security never load its types. */
	private static final class SecurityPrincipal {

		static Mono<Optional<Principal>> current() {
			return ReactiveSecurityContextHolder.getContext()
				.map(SecurityContext::getAuthentication)
				.map((authentication) -> Optional.<Principal>of(authentication))
				.defaultIfEmpty(Optional.empty());
		}

	}

}
