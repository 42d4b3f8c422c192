package io.github.ratelimit.internal.pipeline;

import java.lang.reflect.Method;

/**
 * Provides the {@link CallContext} of the current thread.
 */
@FunctionalInterface
public interface CallContextProvider {

	/**
	 * The context of the call running on this thread.
	 * @return the context
	 */
	CallContext current();

	/**
	 * Whether calls of a method are limited by the web front end rather than around the
	 * call: a reactive web application decides the limits of its handler methods when it
	 * routes the request, before their arguments are resolved.
	 * @param method the invoked method
	 * @return whether the method interceptor leaves the method alone
	 */
	default boolean limitsElsewhere(Method method) {
		return false;
	}

}
