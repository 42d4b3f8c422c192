package io.github.ratelimit.internal.webflux;

import java.net.URI;

import org.junit.jupiter.api.Test;

import org.springframework.http.HttpMethod;
import org.springframework.mock.http.server.reactive.MockServerHttpRequest;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The path a reactive request is limited by is the one WebFlux matches handlers against:
 * within the application, decoded segment by segment, without path parameters.
 */
class ReactiveRateLimitRequestTests {

	@Test
	void aPlainPathIsTakenAsItIs() {
		assertThat(path(MockServerHttpRequest.get("/api/orders/7"))).isEqualTo("/api/orders/7");
	}

	@Test
	void segmentsAreDecodedOneByOne() {
		// an encoded slash stays inside its segment rather than splitting it
		assertThat(path(MockServerHttpRequest.method(HttpMethod.GET, URI.create("/api/caf%C3%A9/a%2Fb")))).isEqualTo("/api/café/a/b");
	}

	@Test
	void pathParametersAreLeftOut() {
		assertThat(path(MockServerHttpRequest.get("/api/orders;v=1/7;jsessionid=abc"))).isEqualTo("/api/orders/7");
	}

	@Test
	void theContextPathIsLeftOut() {
		assertThat(path(MockServerHttpRequest.get("/shop/api/orders").contextPath("/shop"))).isEqualTo("/api/orders");
		assertThat(path(MockServerHttpRequest.method(HttpMethod.GET, URI.create("/shop/api/caf%C3%A9")).contextPath("/shop"))).isEqualTo("/api/café");
	}

	/** {@code get(String)} would encode the percent signs of a path written encoded; a URI is taken as it is. */
	private static String path(MockServerHttpRequest.BaseBuilder<?> request) {
		return new ReactiveRateLimitRequest(request.build(), null).path();
	}

}
