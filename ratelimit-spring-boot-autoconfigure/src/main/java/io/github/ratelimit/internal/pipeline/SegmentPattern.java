package io.github.ratelimit.internal.pipeline;

import java.util.ArrayList;
import java.util.List;

/**
 * A route pattern of the common shapes, matched against the normalised path as a string,
 * without parsing the path into segments: literal segments, whole-segment variables
 * ({@code {id}}) and wildcards ({@code *}), and optionally a last {@code /**} or
 * <code>/{*rest}</code>. It answers as Spring's {@code PathPattern} of the same text
 * parsed by the default parser, which matches a parsed path and so allocates for every
 * request; any other shape (a variable with a regular expression, part of a segment, a
 * {@code ?}, escaped text) is left to the {@code PathPattern}.
 */
final class SegmentPattern {

	/** Kinds of segment. */
	private static final byte LITERAL = 0;

	private static final byte VARIABLE = 1;

	private static final byte WILDCARD = 2;

	/** The pattern's segments, without their separators. */
	private final String[] literals;

	private final byte[] kinds;

	/** Whether the pattern ends with {@code /**} or <code>/{*rest}</code>: any rest of the path, or none. */
	private final boolean anyRest;

	/** The leading literal segments with their separators, compared at once. */
	private final String prefix;

	/** How many segments {@link #prefix} holds. */
	private final int prefixSegments;

	private SegmentPattern(String[] literals, byte[] kinds, boolean anyRest) {
		this.literals = literals;
		this.kinds = kinds;
		this.anyRest = anyRest;
		StringBuilder prefix = new StringBuilder();
		int segments = 0;
		while (segments < kinds.length && kinds[segments] == LITERAL) {
			prefix.append('/').append(literals[segments]);
			segments++;
		}
		this.prefix = prefix.toString();
		this.prefixSegments = segments;
	}

	/**
	 * Compiles a pattern of a supported shape.
	 * @param pattern the pattern text, as the default parser takes it
	 * @return the compiled pattern, or {@code null} when the shape is left to
	 * {@code PathPattern}
	 */
	static SegmentPattern compile(String pattern) {
		if (pattern.isEmpty() || pattern.charAt(0) != '/' || pattern.length() == 1) {
			return null;
		}
		String[] parts = pattern.substring(1).split("/", -1);
		List<String> literals = new ArrayList<>(parts.length);
		List<Byte> kinds = new ArrayList<>(parts.length);
		boolean anyRest = false;
		for (int i = 0; i < parts.length; i++) {
			String part = parts[i];
			boolean last = i == parts.length - 1;
			if (last && (part.equals("**") || isCaptureRest(part))) {
				anyRest = true;
			}
			else if (part.equals("*")) {
				literals.add(null);
				kinds.add(WILDCARD);
			}
			else if (isVariable(part)) {
				literals.add(null);
				kinds.add(VARIABLE);
			}
			else if (!part.isEmpty() && isLiteral(part)) {
				literals.add(part);
				kinds.add(LITERAL);
			}
			else {
				return null;
			}
		}
		byte[] kindArray = new byte[kinds.size()];
		for (int i = 0; i < kindArray.length; i++) {
			kindArray[i] = kinds.get(i);
		}
		return new SegmentPattern(literals.toArray(new String[0]), kindArray, anyRest);
	}

	/** A variable capturing one whole segment, without a regular expression: {@code {id}}. */
	private static boolean isVariable(String part) {
		return part.length() > 2 && part.charAt(0) == '{' && part.charAt(part.length() - 1) == '}'
				&& isName(part, 1, part.length() - 1);
	}

	/** A variable capturing the rest of the path: <code>{*rest}</code>. */
	private static boolean isCaptureRest(String part) {
		return part.length() > 3 && part.startsWith("{*") && part.charAt(part.length() - 1) == '}'
				&& isName(part, 2, part.length() - 1);
	}

	private static boolean isName(String part, int from, int to) {
		for (int i = from; i < to; i++) {
			char c = part.charAt(i);
			if (!Character.isLetterOrDigit(c) && c != '_' && c != '-' && c != '.') {
				return false;
			}
		}
		return true;
	}

	private static boolean isLiteral(String part) {
		for (int i = 0; i < part.length(); i++) {
			switch (part.charAt(i)) {
				case '{', '}', '*', '?', '%', '\\', ';' -> {
					return false;
				}
				default -> {
				}
			}
		}
		return true;
	}

	/**
	 * Whether a path matches, as the {@code PathPattern} of the same text matches it.
	 * @param path the normalised path, starting with {@code /}
	 * @return whether it matches
	 */
	boolean matches(String path) {
		if (!path.startsWith(this.prefix)) {
			return false;
		}
		int length = path.length();
		int at = this.prefix.length();
		if (at < length && path.charAt(at) != '/') {
			// the prefix's last segment goes on in the path
			return false;
		}
		for (int i = this.prefixSegments; i < this.kinds.length; i++) {
			if (at >= length || path.charAt(at) != '/') {
				return false;
			}
			int start = at + 1;
			int end = path.indexOf('/', start);
			if (end < 0) {
				end = length;
			}
			if (this.kinds[i] == LITERAL) {
				String literal = this.literals[i];
				if (end - start != literal.length() || !path.startsWith(literal, start)) {
					return false;
				}
			}
			else if (end == start && !(end == length && this.kinds[i] == WILDCARD && i == this.kinds.length - 1
					&& !this.anyRest)) {
				// a variable or a wildcard takes a segment of at least one character, but for a
				// last wildcard, which also takes the empty segment after a trailing separator
				return false;
			}
			at = end;
		}
		if (at == length) {
			return true;
		}
		// what is left starts with a separator: any rest matches a trailing /** or {*rest}
		return this.anyRest;
	}

}
