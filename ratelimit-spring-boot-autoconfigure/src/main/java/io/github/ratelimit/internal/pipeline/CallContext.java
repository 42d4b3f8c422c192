package io.github.ratelimit.internal.pipeline;

import java.lang.reflect.Method;
import java.security.Principal;
import java.util.List;

import io.github.ratelimit.KeySource;
import io.github.ratelimit.RateLimitUsage;
import io.github.ratelimit.internal.core.CountedOutcomes;
import io.github.ratelimit.internal.core.LimitDefinition;
import io.github.ratelimit.store.Acquisition;
import io.github.ratelimit.store.RateLimitResult;

/**
 * What a rate limited call knows about where it runs: inside a web request or not.
 */
public interface CallContext {

	/**
	 * The canonical route name ({@code GET /orders/{id}}) when {@code method} is the
	 * handler of the current web request.
	 * @param method the invoked method
	 * @return the route name, or {@code null} outside that case
	 */
	String handlerRouteName(Method method);

	/**
	 * The identity of the call for a limit: inside a web request the application's key
	 * resolvers, then the key chain, where the first source available wins.
	 * @param limit the limit name
	 * @param keyChain the key sources in order
	 * @return the identity, never {@code null}
	 */
	String identity(String limit, List<KeySource> keyChain);

	/**
	 * The authenticated principal, from which the plan of the call is found.
	 * @return the principal, or {@code null} when nobody is authenticated
	 */
	default Principal principal() {
		return PrincipalNames.current(null);
	}

	/**
	 * The current request, exposed to key expressions as {@code #request}.
	 * @return the request, or {@code null}
	 */
	Object request();

	/**
	 * Route limits left for the handler to decide together with its own limits; taken
	 * once.
	 * @return the acquisitions, possibly empty
	 */
	List<Acquisition> takeDeferredAcquisitions();

	/**
	 * Says which final HTTP statuses count for acquisitions of the request's handler
	 * about to be decided; outside web requests statuses mean nothing and this does
	 * nothing.
	 * @param acquisitions the acquisitions of one limit
	 * @param statuses the statuses that count for them
	 */
	default void countOnly(List<Acquisition> acquisitions, CountedOutcomes statuses) {
	}

	/**
	 * Says that acquisitions of the request's handler about to be decided settle their
	 * cost once the response is final; outside web requests a call settles by itself and
	 * this does nothing.
	 * @param acquisitions the acquisitions of one limit
	 * @param definition the limit, whose expressions and header give the actual cost
	 */
	default void settleOnly(List<Acquisition> acquisitions, LimitDefinition definition) {
	}

	/**
	 * Called when the request's handler returned, with what it returned: the actual cost
	 * of limits settling over {@code #result}. Outside web requests this does nothing.
	 * @param method the handler method
	 * @param args its arguments
	 * @param value what it returned (for a {@code Mono} or a {@code CompletionStage}, the
	 * value it completed with)
	 */
	default void handlerReturned(Method method, Object[] args, Object value) {
	}

	/**
	 * Where the request's handler reports its actual cost, for handlers whose limits
	 * settle once the response is final.
	 * @return the request's usage, or {@code null} outside web requests
	 */
	default RateLimitUsage usage() {
		return null;
	}

	/**
	 * Called after the limits of the call admitted it.
	 * @param acquisitions what was acquired
	 * @param result the decisions
	 */
	void allowed(List<Acquisition> acquisitions, RateLimitResult result);

	/**
	 * Called after a limit rejected the call, before the exception is thrown.
	 * @param result the decisions
	 * @param refundEarlierStages whether to give back what earlier stages of the same
	 * request consumed: true when the handler itself is rejected before it runs, false for
	 * a call made while the handler runs (its work is being done and stays charged)
	 */
	void rejected(RateLimitResult result, boolean refundEarlierStages);

}
