package io.github.ratelimit.redis;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import org.springframework.data.redis.core.script.RedisScript;

import io.github.ratelimit.core.AlgorithmSpec;

/**
 * The Lua scripts of the Redis store, read from the classpath (they live in
 * {@code src-lua/}). A script sent to Redis is composed of the shared helpers, the scripts
 * of algorithms in the {@link AlgorithmSpec} registry (without their standalone entries),
 * each registering itself in the shared dispatch table, and a driver: the one deciding
 * every limit of a request in one call, or the one operators read buckets with.
 * <p>
 * Redis runs the whole script on every call, defining whatever it contains, so the store
 * sends a script composed of the algorithms the call uses only: one per combination of
 * algorithms, composed once and loaded by Redis on first use.
 */
public final class RedisScripts {

	/** Where the scripts are packaged. */
	public static final String LOCATION = "io/github/ratelimit/redis/lua/";

	private static final String STANDALONE_MARKER = "-- standalone entry --";

	/**
	 * Every script file, read once when the store's class loads: a combination of
	 * algorithms first used by a request is composed on the thread deciding it, which may
	 * be an event loop, so composing must not read the classpath.
	 */
	private static final Map<String, String> FILES = readAll();

	private RedisScripts() {
	}

	/**
	 * The script deciding every limit of a request, whatever its algorithms.
	 * @return the composed script, replying a list
	 */
	@SuppressWarnings("rawtypes")
	public static RedisScript<List> acquire() {
		return acquire(AlgorithmSpec.all());
	}

	/**
	 * The script deciding every limit of a request whose limits use only some algorithms.
	 * @param algorithms the algorithms it decides
	 * @return the composed script, replying a list
	 */
	@SuppressWarnings("rawtypes")
	public static RedisScript<List> acquire(Collection<AlgorithmSpec> algorithms) {
		return composed(algorithms, "acquire.lua");
	}

	/**
	 * The script reading buckets without consuming anything.
	 * @return the composed script, replying a list
	 */
	@SuppressWarnings("rawtypes")
	public static RedisScript<List> inspect() {
		return composed(AlgorithmSpec.all(), "inspect.lua");
	}

	/** The shared helpers, the algorithms without their standalone entries, then a driver. */
	@SuppressWarnings("rawtypes")
	private static RedisScript<List> composed(Collection<AlgorithmSpec> algorithms, String driver) {
		return RedisScript.of(library(algorithms) + '\n' + read(driver), List.class);
	}

	/**
	 * One algorithm's script on its own, as documented in its header.
	 * @param file the script file, such as {@code token_bucket.lua}
	 * @return the script with the shared helpers, every algorithm's functions and the
	 * standalone helper of {@code standalone.lua}, replying a list
	 */
	@SuppressWarnings("rawtypes")
	public static RedisScript<List> standalone(String file) {
		if (AlgorithmSpec.all().stream().noneMatch((spec) -> spec.redisScript().equals(file))) {
			throw new IllegalArgumentException("No algorithm is decided by " + file);
		}
		String text = read(file);
		String entry = text.substring(text.indexOf(STANDALONE_MARKER));
		return RedisScript.of(library(AlgorithmSpec.all()) + '\n' + read("standalone.lua") + '\n' + entry,
				List.class);
	}

	/** The shared helpers and the scripts of these algorithms, without their standalone entries. */
	static String library(Collection<AlgorithmSpec> algorithms) {
		Set<String> files = new LinkedHashSet<>();
		for (AlgorithmSpec spec : AlgorithmSpec.all()) {
			if (algorithms.contains(spec)) {
				files.addAll(spec.redisScripts());
			}
		}
		StringBuilder script = new StringBuilder(read("lib.lua"));
		for (String file : files) {
			String text = read(file);
			int entry = text.indexOf(STANDALONE_MARKER);
			script.append('\n').append((entry >= 0) ? text.substring(0, entry) : text);
		}
		return script.toString();
	}

	static String read(String file) {
		String text = FILES.get(file);
		return (text != null) ? text : readResource(file);
	}

	private static Map<String, String> readAll() {
		Set<String> files = new LinkedHashSet<>(List.of("lib.lua", "acquire.lua", "inspect.lua", "standalone.lua"));
		for (AlgorithmSpec spec : AlgorithmSpec.all()) {
			files.addAll(spec.redisScripts());
		}
		Map<String, String> texts = new HashMap<>();
		for (String file : files) {
			texts.put(file, readResource(file));
		}
		return Map.copyOf(texts);
	}

	private static String readResource(String file) {
		try (InputStream in = RedisScripts.class.getClassLoader().getResourceAsStream(LOCATION + file)) {
			if (in == null) {
				throw new IllegalStateException("Rate limit script " + LOCATION + file + " is missing from the classpath");
			}
			return new String(in.readAllBytes(), StandardCharsets.UTF_8);
		}
		catch (IOException ex) {
			throw new IllegalStateException("Cannot read rate limit script " + file, ex);
		}
	}

}
