package io.github.ratelimit.benchmarks.loop;

import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A benchmark's command line: {@code --name value} pairs.
 */
public final class Options {

	private final Map<String, String> values;

	private Options(Map<String, String> values) {
		this.values = values;
	}

	/**
	 * Reads {@code --name value} pairs.
	 * @param args the command line
	 * @return the options
	 * @throws IllegalArgumentException when an argument is not part of such a pair
	 */
	public static Options parse(String[] args) {
		Map<String, String> values = new LinkedHashMap<>();
		for (int i = 0; i < args.length; i++) {
			if (!args[i].startsWith("--") || i + 1 >= args.length) {
				throw new IllegalArgumentException("Expected --name value pairs, got " + args[i]);
			}
			values.put(args[i].substring(2), args[++i]);
		}
		return new Options(values);
	}

	/**
	 * An option's value.
	 * @param name the option, without its dashes
	 * @param otherwise the value when the option is not given
	 * @return the value
	 */
	public String get(String name, String otherwise) {
		return this.values.getOrDefault(name, otherwise);
	}

	/**
	 * An option's value, as a number.
	 * @param name the option, without its dashes
	 * @param otherwise the value when the option is not given
	 * @return the value
	 */
	public long number(String name, long otherwise) {
		String value = this.values.get(name);
		return (value != null) ? Long.parseLong(value) : otherwise;
	}

	/**
	 * An option's comma-separated values.
	 * @param name the option, without its dashes
	 * @param otherwise the values when the option is not given, comma-separated
	 * @return the values
	 */
	public List<String> list(String name, String otherwise) {
		return Arrays.asList(get(name, otherwise).split(","));
	}

	/**
	 * An option's value, which must be given.
	 * @param name the option, without its dashes
	 * @return the value
	 * @throws IllegalArgumentException when the option is not given
	 */
	public String required(String name) {
		String value = this.values.get(name);
		if (value == null) {
			throw new IllegalArgumentException("--" + name + " is required");
		}
		return value;
	}

}
