package io.github.ratelimit.internal.pipeline;

import java.util.Set;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Names of unnamed handler limits.
 */
class RouteNamesTests {

	@Test
	void namesAHandlerByItsMethodAndTemplate() {
		assertThat(RouteNames.of(Set.of("GET", "POST"), "POST", "/orders/{id}")).isEqualTo("POST /orders/{id}");
	}

	@Test
	void namesAHandlerOfEveryMethodByItsTemplateAlone() {
		assertThat(RouteNames.of(Set.of(), "DELETE", "/orders/{id}")).isEqualTo("/orders/{id}");
	}

	@Test
	void countsHeadAsGetUnlessHeadIsMappedItself() {
		assertThat(RouteNames.of(Set.of("GET"), "HEAD", "/orders")).isEqualTo("GET /orders");
		assertThat(RouteNames.of(Set.of("GET", "HEAD"), "HEAD", "/orders")).isEqualTo("HEAD /orders");
	}

	@Test
	void namesAMappingWithoutAPathAfterTheRoot() {
		// a blank name would fail the startup with an error about the limit's capacity
		assertThat(RouteNames.of(Set.of(), "GET", "")).isEqualTo("/");
		assertThat(RouteNames.of(Set.of("GET"), "GET", "")).isEqualTo("GET /");
	}

}
