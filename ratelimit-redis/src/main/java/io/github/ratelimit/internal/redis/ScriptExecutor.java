package io.github.ratelimit.internal.redis;

import java.util.List;

/** Runs a composed script and waits for its reply: the transport of the store's sync calls. */
interface ScriptExecutor {

	/**
	 * Runs the script.
	 * @param script the script
	 * @param keys its keys
	 * @param args its arguments
	 * @return its reply
	 */
	List<?> execute(Script script, byte[][] keys, byte[][] args);

}
