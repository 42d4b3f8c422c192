package io.github.ratelimit.internal.pipeline;

import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;

import org.springframework.http.server.PathContainer;
import org.springframework.web.util.pattern.PathPattern;
import org.springframework.web.util.pattern.PathPatternParser;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The string matcher of route patterns answers as Spring's {@code PathPattern} on edge
 * paths, and takes only the shapes it can answer for.
 */
class SegmentPatternTests {

	private static final PathContainer.Options DECODED_PATH = PathContainer.Options.create('/', false);

	private static final List<String> PATHS = List.of("/", "/api", "/api/", "/api//", "/api/search",
			"/api/search/", "/api/search//", "/api/search/x", "/api/search/x/", "/api/search/x/y", "/api/searchx",
			"/api/searc", "/API/search", "/api/search;x", "/api/search;x/y", "/api/search/x;y", "//api/search",
			"/api//search", "/api/orders/7", "/api/orders/7/", "/api/orders//", "/api/orders/7/items",
			"/api/orders/7/items/", "/api/orders/7/items/9", "/api/orders/ /items", "/api/orders/%20/items",
			"/api/orders/a.b/items", "/v1/acme/items", "/v1//items", "/v1/items", "/files", "/files/",
			"/files/a", "/files/a/b/c", "/filesx", "/a/b/c/d", "/a/b/c/d/", "/a/b/c/", "/x", "/x/", "/x//", "/api/orders//items", "/api/search/\u00e9", "/api/search/a b");

	@Test
	void answersAsThePathPatternOfTheSameTextOnEdgePaths() {
		List<String> patterns = List.of("/api/search/**", "/api/**", "/api/orders/{id}", "/api/orders/*",
				"/api/orders/{id}/items", "/api/orders/*/items/**", "/api/orders/{id}/items/{item}",
				"/v1/{tenant}/items", "/files/{*rest}", "/files/**", "/*", "/{first}/{second}", "/*/*/*/*",
				"/api/search/*", "/api/{a}/{*rest}", "/api/*/**", "/*/**", "/api/{a}/*", "/api/*/{a}", "/**", "/{*all}");
		List<String> disagreements = new ArrayList<>();
		for (String text : patterns) {
			SegmentPattern compiled = SegmentPattern.compile(text);
			assertThat(compiled).as(text).isNotNull();
			PathPattern pattern = PathPatternParser.defaultInstance.parse(text);
			for (String path : PATHS) {
				boolean expected = pattern.matches(PathContainer.parsePath(path, DECODED_PATH));
				if (compiled.matches(path) != expected) {
					disagreements.add(text + " on " + path + ": expected " + expected);
				}
			}
		}
		assertThat(disagreements).isEmpty();
	}

	@Test
	void leavesOtherShapesToThePathPattern() {
		for (String text : List.of("/api/{id:[0-9]+}", "/img/*.png", "/a?c", "/x%20y", "/**/leaf", "/api/**/x",
				"/docs/v{version}/index", "/api//x", "/", "", "api/x", "/api/{*rest}/x", "/a;b/*", "/{a}{b}",
				"/api/", "/api/*/")) {
			assertThat(SegmentPattern.compile(text)).as(text).isNull();
		}
	}

}
