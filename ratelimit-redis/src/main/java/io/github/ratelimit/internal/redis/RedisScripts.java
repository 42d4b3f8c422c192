package io.github.ratelimit.internal.redis;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.Collection;
import java.util.Collections;
import java.util.Deque;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.springframework.data.redis.core.script.RedisScript;

import io.github.ratelimit.internal.core.AlgorithmSpec;

/**
 * The Lua scripts of the Redis store, read from the classpath (they live in
 * {@code src-lua/}). A script sent to Redis is composed of the shared helpers, the scripts
 * of algorithms in the {@link AlgorithmSpec} registry (without their standalone entries),
 * each registering itself in the shared dispatch table, and a driver: the one deciding
 * every limit of a request in one call, or the one operators read buckets with.
 * <p>
 * Redis runs the whole script on every call, defining whatever it contains, so the store
 * sends a script composed of the algorithms the call uses only, and of the shared helpers
 * they and the driver use: one per combination of algorithms, composed once and loaded by
 * Redis on first use.
 */
public final class RedisScripts {

	/** Where the scripts are packaged. */
	public static final String LOCATION = "io/github/ratelimit/internal/redis/lua/";

	private static final String STANDALONE_MARKER = "-- standalone entry --";

	/** Stands for the function's name in its library until the name, a hash of the library, is known. */
	private static final String FUNCTION_NAME = "<function name>";

	/** A top-level definition in {@code lib.lua}: {@code local function name} or {@code local name =}. */
	private static final Pattern DEFINITION = Pattern.compile("(?m)^local (?:function )?(\\w+)");

	/** The names of the shared helpers, all of which begin so. */
	private static final Pattern HELPER_NAME = Pattern.compile("\\b(?:rl|RL)_\\w+");

	private static final Pattern COMMENT = Pattern.compile("--[^\\n]*");

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
	 * The script deciding every limit of a request whose limits use only some algorithms,
	 * as a Redis function library (Redis 7 and later, {@code FUNCTION LOAD}): its helpers
	 * and algorithms are defined once, when Redis loads it, and {@code FCALL} of its
	 * {@link RedisFunction#name() function} with the keys and arguments of
	 * {@link #acquire(Collection)} runs the driver alone, which is what every call would
	 * define again with {@code EVALSHA}.
	 * @param algorithms the algorithms it decides
	 * @return the function and its library
	 */
	public static RedisFunction acquireFunction(Collection<AlgorithmSpec> algorithms) {
		String driver = read("acquire.lua");
		// KEYS and ARGV are globals of a script; here locals of the library, set by each call
		String body = "local KEYS, ARGV\n" + library(algorithms, driver) + "\nredis.register_function('"
				+ FUNCTION_NAME + "', function(keys, args)\nKEYS, ARGV = keys, args\n" + driver + "\nend)\n";
		// named after its code, so that instances of different releases each call their own
		String name = "ratelimit_" + RedisScript.of(body).getSha1();
		return new RedisFunction(name, "#!lua name=" + name + "\n" + body.replace(FUNCTION_NAME, name));
	}

	/**
	 * A Redis function and the library that registers it.
	 * @param name the function's name, which is also its library's
	 * @param library the library's code, for {@code FUNCTION LOAD}
	 */
	public record RedisFunction(String name, String library) {
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
		String code = read(driver);
		return RedisScript.of(library(algorithms, code) + '\n' + code, List.class);
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
		String code = read("standalone.lua") + '\n' + text.substring(text.indexOf(STANDALONE_MARKER));
		return RedisScript.of(library(AlgorithmSpec.all(), code) + '\n' + code, List.class);
	}

	/**
	 * The shared helpers and the scripts of these algorithms, without their standalone
	 * entries, for a script that goes on with {@code code}.
	 * @param algorithms the algorithms composed
	 * @param code what follows them (a driver), naming the helpers it uses
	 * @return the helpers the algorithms and the code use, then the algorithms
	 */
	static String library(Collection<AlgorithmSpec> algorithms, String code) {
		Set<String> files = new LinkedHashSet<>();
		for (AlgorithmSpec spec : AlgorithmSpec.all()) {
			if (algorithms.contains(spec)) {
				files.addAll(spec.redisScripts());
			}
		}
		StringBuilder scripts = new StringBuilder();
		for (String file : files) {
			String text = read(file);
			int entry = text.indexOf(STANDALONE_MARKER);
			scripts.append('\n').append((entry >= 0) ? text.substring(0, entry) : text);
		}
		return helpers(scripts + "\n" + code) + scripts;
	}

	/**
	 * The paragraphs of {@code lib.lua} that {@code code} needs: each helper is a
	 * paragraph of its own, kept when the code or a kept helper after it names what it
	 * defines (a Lua local is defined before it is used, so one pass from the last
	 * paragraph back finds them all). Redis defines everything a script's top level holds
	 * on every call, so an unused helper would cost every request a closure or a table.
	 * Paragraphs that define nothing (comments) are kept.
	 */
	private static String helpers(String code) {
		String[] paragraphs = read("lib.lua").split("\n\n");
		Set<String> used = names(code);
		Deque<String> kept = new ArrayDeque<>();
		for (int i = paragraphs.length - 1; i >= 0; i--) {
			Set<String> defined = new HashSet<>();
			Matcher definition = DEFINITION.matcher(paragraphs[i]);
			while (definition.find()) {
				defined.add(definition.group(1));
			}
			if (defined.isEmpty() || !Collections.disjoint(defined, used)) {
				kept.addFirst(paragraphs[i]);
				used.addAll(names(paragraphs[i]));
			}
		}
		return String.join("\n\n", kept) + '\n';
	}

	/** The helper names Lua code uses, comments left out. */
	private static Set<String> names(String code) {
		Set<String> names = new HashSet<>();
		Matcher name = HELPER_NAME.matcher(COMMENT.matcher(code).replaceAll(""));
		while (name.find()) {
			names.add(name.group());
		}
		return names;
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
