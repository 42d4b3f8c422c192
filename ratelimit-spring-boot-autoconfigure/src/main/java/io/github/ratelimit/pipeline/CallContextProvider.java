package io.github.ratelimit.pipeline;

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

}
