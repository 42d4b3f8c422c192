package io.github.ratelimit.internal.pipeline;

import java.util.ArrayList;
import java.util.List;

import org.springframework.http.server.PathContainer;
import org.springframework.util.StringUtils;
import org.springframework.web.util.pattern.PathPattern;
import org.springframework.web.util.pattern.PathPatternParser;
import org.springframework.web.util.pattern.PatternParseException;

import io.github.ratelimit.RateLimitRequest;

/**
 * Finds the configured route limits a request matches, on its normalised path and
 * method. Most requests are matched by comparing strings: a path is parsed for the
 * pattern matcher only when a pattern of a shape {@link SegmentPattern} does not take may
 * match it.
 */
public final class RouteMatcher {

	/** Paths reach the matcher decoded already: they are parsed without decoding them again. */
	private static final PathContainer.Options DECODED_PATH = PathContainer.Options.create('/', false);

	private final List<RouteLimit> routes;

	/** Each route alone in a list, the answer of a request only it matches: most requests. */
	private final List<List<RouteLimit>> alone;

	/** Each route's pattern up to its first variable or wildcard: a path without it cannot match. */
	private final String[] literalPrefixes;

	/** Whether each route's pattern is all literal text, matched by comparing the path with it. */
	private final boolean[] literal;

	/**
	 * Each route's pattern compiled to match the path as a string, when its shape allows
	 * (segments, whole-segment variables and wildcards, a trailing {@code /**}); else
	 * {@code null}, and the path is parsed for the pattern.
	 */
	private final SegmentPattern[] compiled;

	/**
	 * Creates a matcher.
	 * @param routes the configured route limits, in configuration order
	 */
	public RouteMatcher(List<RouteLimit> routes) {
		this.routes = List.copyOf(routes);
		this.alone = this.routes.stream().map(List::of).toList();
		this.literalPrefixes = new String[this.routes.size()];
		this.literal = new boolean[this.routes.size()];
		this.compiled = new SegmentPattern[this.routes.size()];
		for (int i = 0; i < this.routes.size(); i++) {
			PathPattern pattern = this.routes.get(i).pattern();
			String text = pattern.getPatternString();
			// a pattern parsed otherwise (ignoring case, another separator) is left to its matcher
			boolean shortcut = isDefaultParsed(pattern);
			this.literalPrefixes[i] = shortcut ? literalPrefix(text) : "";
			this.literal[i] = shortcut && this.literalPrefixes[i].length() == text.length();
			this.compiled[i] = (shortcut && !this.literal[i]) ? SegmentPattern.compile(text) : null;
		}
	}

	/** Whether Spring's default parser (case-sensitive, {@code /}) gives the same pattern. */
	private static boolean isDefaultParsed(PathPattern pattern) {
		try {
			return pattern.equals(PathPatternParser.defaultInstance.parse(pattern.getPatternString()));
		}
		catch (PatternParseException ex) {
			return false;
		}
	}

	/**
	 * The text every path a pattern matches begins with: the whole pattern when it has no
	 * variable or wildcard ({@code {}, {@code *}, {@code ?}; a percent sign too, leaving
	 * escaped text to the pattern), else the segments before the one holding the first,
	 * without their last separator, which {@code /**} and <code>/{*rest}</code> may
	 * match without. Literal segments are compared exactly, case included.
	 */
	static String literalPrefix(String pattern) {
		for (int i = 0; i < pattern.length(); i++) {
			switch (pattern.charAt(i)) {
				case '{', '*', '?', '%' -> {
					return pattern.substring(0, Math.max(0, pattern.lastIndexOf('/', i)));
				}
				default -> {
				}
			}
		}
		return pattern;
	}

	/**
	 * Whether any route limit is configured.
	 * @return whether there are route limits
	 */
	public boolean hasRoutes() {
		return !this.routes.isEmpty();
	}

	/**
	 * The route limits matching a request. The path is stripped of dot segments and
	 * duplicate slashes first, so that {@code //api/./reports} cannot slip past a pattern
	 * for {@code /api/reports}. CORS preflight requests are not limited.
	 * <p>
	 * A path is parsed for the pattern matcher only when some route's literal prefix fits
	 * it and that route's pattern has a shape the string matcher does not take (a regular
	 * expression, part of a segment): a pattern of literal text alone matches exactly the
	 * path equal to it, and one of whole segments and a trailing {@code /**} is matched by
	 * walking the path's separators, so most requests, limited or not, allocate nothing.
	 * @param request the request
	 * @return the matching route limits, in configuration order; not to be modified
	 */
	public List<RouteLimit> match(RateLimitRequest request) {
		if (this.routes.isEmpty() || isPreflight(request)) {
			return List.of();
		}
		String path = StringUtils.cleanPath(request.path());
		if (!path.startsWith("/")) {
			path = "/" + path;
		}
		String method = request.method();
		PathContainer container = null;
		// indexed, and a list only once a second route matches: this runs on every request
		List<RouteLimit> matched = List.of();
		for (int i = 0; i < this.routes.size(); i++) {
			RouteLimit route = this.routes.get(i);
			if (!path.startsWith(this.literalPrefixes[i]) || !route.appliesTo(method)) {
				continue;
			}
			if (this.literal[i]) {
				if (path.length() != this.literalPrefixes[i].length()) {
					continue;
				}
			}
			else if (this.compiled[i] != null) {
				if (!this.compiled[i].matches(path)) {
					continue;
				}
			}
			else {
				if (container == null) {
					container = PathContainer.parsePath(path, DECODED_PATH);
				}
				if (!route.pattern().matches(container)) {
					continue;
				}
			}
			if (matched.isEmpty()) {
				matched = this.alone.get(i);
			}
			else {
				if (matched.size() == 1) {
					matched = new ArrayList<>(matched);
				}
				matched.add(this.routes.get(i));
			}
		}
		return matched;
	}

	/** A CORS preflight: OPTIONS with an Origin and Access-Control-Request-Method. */
	private static boolean isPreflight(RateLimitRequest request) {
		return "OPTIONS".equals(request.method()) && request.header("Origin") != null
				&& request.header("Access-Control-Request-Method") != null;
	}

}
