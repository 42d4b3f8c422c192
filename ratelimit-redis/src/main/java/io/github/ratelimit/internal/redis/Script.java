package io.github.ratelimit.internal.redis;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicReferenceArray;

import org.springframework.data.redis.core.script.RedisScript;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.internal.core.AlgorithmSpec;

/**
 * A composed script, by its SHA-1 and its text, and the same as a Redis function: its
 * name and its library's code.
 * @param sha the script's SHA-1, for EVALSHA
 * @param bytes the script's text, for EVAL
 * @param function the function's name, for FCALL
 * @param library the function's library, for FUNCTION LOAD
 */
record Script(String sha, byte[] bytes, String function, String library) {

	/**
	 * By set of algorithms (a bit per {@link Algorithm#ordinal()}), the script deciding
	 * them, composed on first use: Redis defines whatever a script holds on every call.
	 * The scripts are derived from the classpath alone, the same for every store.
	 */
	private static final AtomicReferenceArray<Script> COMPOSED = new AtomicReferenceArray<>(
			1 << Algorithm.values().length);

	@SuppressWarnings("rawtypes")
	private Script(RedisScript<List> script, RedisScripts.RedisFunction function) {
		this(script.getSha1(), script.getScriptAsString().getBytes(StandardCharsets.UTF_8), function.name(),
				function.library());
	}

	/**
	 * The script deciding a set of algorithms.
	 * @param algorithms a bit per {@link Algorithm#ordinal()}
	 * @return the script
	 */
	static Script of(int algorithms) {
		Script script = COMPOSED.get(algorithms);
		if (script == null) {
			List<AlgorithmSpec> specs = new ArrayList<>();
			for (Algorithm algorithm : Algorithm.values()) {
				if ((algorithms & (1 << algorithm.ordinal())) != 0) {
					specs.add(AlgorithmSpec.of(algorithm));
				}
			}
			script = new Script(RedisScripts.acquire(specs), RedisScripts.acquireFunction(specs));
			COMPOSED.compareAndSet(algorithms, null, script);
		}
		return script;
	}

	/**
	 * The scripts of requests whose limits share one algorithm, which the store loads
	 * ahead of the first request.
	 * @return a script per algorithm
	 */
	static List<Script> singleAlgorithms() {
		List<Script> scripts = new ArrayList<>();
		for (Algorithm algorithm : Algorithm.values()) {
			scripts.add(of(1 << algorithm.ordinal()));
		}
		return scripts;
	}

}
