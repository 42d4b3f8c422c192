package io.github.ratelimit.redis;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.List;

import org.springframework.data.redis.core.script.RedisScript;

import io.github.ratelimit.core.AlgorithmSpec;

/**
 * The Lua scripts of the Redis store, read from the classpath (they live in
 * {@code src-lua/}). The script run for every request is composed of the shared helpers,
 * the script of every algorithm in the {@link AlgorithmSpec} registry (without its
 * standalone entry), each registering itself in the shared dispatch table, and the driver
 * deciding all limits of a request in one call; the script operators read buckets with is
 * composed the same way.
 */
public final class RedisScripts {

	/** Where the scripts are packaged. */
	public static final String LOCATION = "io/github/ratelimit/redis/lua/";

	private static final String STANDALONE_MARKER = "-- standalone entry --";

	/** Every algorithm's script, once each, in the registry's order. */
	private static final List<String> ALGORITHMS = AlgorithmSpec.all()
		.stream()
		.map(AlgorithmSpec::redisScript)
		.distinct()
		.toList();

	private RedisScripts() {
	}

	/**
	 * The script deciding every limit of a request.
	 * @return the composed script, replying a list
	 */
	@SuppressWarnings("rawtypes")
	public static RedisScript<List> acquire() {
		return composed("acquire.lua");
	}

	/**
	 * The script reading buckets without consuming anything.
	 * @return the composed script, replying a list
	 */
	@SuppressWarnings("rawtypes")
	public static RedisScript<List> inspect() {
		return composed("inspect.lua");
	}

	/** The shared helpers, every algorithm without its standalone entry, then a driver. */
	@SuppressWarnings("rawtypes")
	private static RedisScript<List> composed(String driver) {
		return RedisScript.of(library() + '\n' + read(driver), List.class);
	}

	/**
	 * One algorithm's script on its own, as documented in its header.
	 * @param file the script file, such as {@code token_bucket.lua}
	 * @return the script with the shared helpers, every algorithm's functions and the
	 * standalone helper of {@code standalone.lua}, replying a list
	 */
	@SuppressWarnings("rawtypes")
	public static RedisScript<List> standalone(String file) {
		if (!ALGORITHMS.contains(file)) {
			throw new IllegalArgumentException("No algorithm is decided by " + file);
		}
		String text = read(file);
		String entry = text.substring(text.indexOf(STANDALONE_MARKER));
		return RedisScript.of(library() + '\n' + read("standalone.lua") + '\n' + entry, List.class);
	}

	/** The shared helpers and every algorithm without its standalone entry. */
	static String library() {
		StringBuilder script = new StringBuilder(read("lib.lua"));
		for (String algorithm : ALGORITHMS) {
			String text = read(algorithm);
			int entry = text.indexOf(STANDALONE_MARKER);
			script.append('\n').append((entry >= 0) ? text.substring(0, entry) : text);
		}
		return script.toString();
	}

	static String read(String file) {
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
