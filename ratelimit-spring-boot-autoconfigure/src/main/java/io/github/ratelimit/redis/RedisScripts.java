package io.github.ratelimit.redis;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.List;

import org.springframework.data.redis.core.script.RedisScript;

/**
 * The Lua scripts of the Redis store, read from the classpath (they live in
 * {@code src-lua/}). The script run for every request is composed of the shared helpers,
 * every algorithm (without its standalone entry) and the driver deciding all limits of
 * a request in one call; the script operators read buckets with is composed the same way.
 */
public final class RedisScripts {

	/** Where the scripts are packaged. */
	public static final String LOCATION = "io/github/ratelimit/redis/lua/";

	private static final String STANDALONE_MARKER = "-- standalone entry --";

	private static final List<String> ALGORITHMS = List.of("token_bucket.lua", "fixed_window.lua",
			"sliding_window_log.lua", "sliding_window_counter.lua");

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
		StringBuilder script = new StringBuilder(read("lib.lua"));
		for (String algorithm : ALGORITHMS) {
			String text = read(algorithm);
			int entry = text.indexOf(STANDALONE_MARKER);
			script.append('\n').append((entry >= 0) ? text.substring(0, entry) : text);
		}
		script.append('\n').append(read(driver));
		return RedisScript.of(script.toString(), List.class);
	}

	/**
	 * One algorithm's script on its own, as documented in its header.
	 * @param file the script file, such as {@code token_bucket.lua}
	 * @return the script with the shared helpers, replying a list
	 */
	@SuppressWarnings("rawtypes")
	public static RedisScript<List> standalone(String file) {
		StringBuilder script = new StringBuilder(read("lib.lua")).append('\n');
		if ("leaky_bucket.lua".equals(file)) {
			// the leaky bucket runs the token bucket's functions
			String gcra = read("token_bucket.lua");
			script.append(gcra, 0, gcra.indexOf(STANDALONE_MARKER)).append('\n');
		}
		return RedisScript.of(script.append(read(file)).toString(), List.class);
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
