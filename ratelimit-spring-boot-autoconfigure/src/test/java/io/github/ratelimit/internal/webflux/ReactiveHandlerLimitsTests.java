package io.github.ratelimit.internal.webflux;

import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.support.StaticListableBeanFactory;
import org.springframework.mock.http.server.reactive.MockServerHttpRequest;
import org.springframework.web.bind.annotation.RequestMethod;
import org.springframework.web.reactive.result.method.RequestMappingInfo;
import org.springframework.web.reactive.result.method.annotation.RequestMappingHandlerMapping;

import io.github.ratelimit.KeySource;
import io.github.ratelimit.RateLimited;
import io.github.ratelimit.internal.core.LimitResolver;
import io.github.ratelimit.internal.pipeline.MethodLimits;
import io.github.ratelimit.internal.pipeline.RateLimitedMethods;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Which requests the reactive handler filter routes to find a limited handler: only those
 * whose path a limited handler's pattern matches, so that the rest are routed once, by
 * the dispatcher.
 */
class ReactiveHandlerLimitsTests {

	@Test
	void onlyPathsOfLimitedHandlersAreRoutedAhead() throws Exception {
		ReactiveHandlerLimits limits = limits(Map.of("/things/{id}", "thing", "/things/special", "other",
				"/reports/**", "other"));
		assertThat(limits.hasHandlerLimits()).isTrue();
		assertThat(limits.mayRouteToLimited(MockServerHttpRequest.get("/things/7").build())).isTrue();
		// a more specific unlimited handler may still win: the dispatcher's lookup decides
		assertThat(limits.mayRouteToLimited(MockServerHttpRequest.get("/things/special").build())).isTrue();
		assertThat(limits.mayRouteToLimited(MockServerHttpRequest.get("/things").build())).isFalse();
		assertThat(limits.mayRouteToLimited(MockServerHttpRequest.get("/things/7/parts").build())).isFalse();
		assertThat(limits.mayRouteToLimited(MockServerHttpRequest.get("/reports/2026/11").build())).isFalse();
		// the pattern is matched against the path within the application, as the dispatcher does
		assertThat(limits.mayRouteToLimited(MockServerHttpRequest.get("/shop/things/7").contextPath("/shop").build()))
			.isTrue();
		assertThat(limits.mayRouteToLimited(MockServerHttpRequest.get("/shop/reports/1").contextPath("/shop").build()))
			.isFalse();
	}

	@Test
	void aLimitedHandlerWithoutPatternsIsLookedUpForEveryPath() throws Exception {
		ReactiveHandlerLimits limits = limits(Map.of("", "thing"));
		assertThat(limits.mayRouteToLimited(MockServerHttpRequest.get("/anything/at/all").build())).isTrue();
	}

	@Test
	void withoutLimitedHandlersNothingIsRoutedAhead() throws Exception {
		ReactiveHandlerLimits limits = limits(Map.of("/things/{id}", "other"));
		assertThat(limits.hasHandlerLimits()).isFalse();
		assertThat(limits.mayRouteToLimited(MockServerHttpRequest.get("/things/7").build())).isFalse();
	}

	/** Handler limits over one mapping of the given paths to methods of {@link Things}. */
	private static ReactiveHandlerLimits limits(Map<String, String> handlers) throws Exception {
		RequestMappingHandlerMapping mapping = new RequestMappingHandlerMapping();
		Things things = new Things();
		for (Map.Entry<String, String> handler : handlers.entrySet()) {
			// a mapping without a path takes every method too, as a bare @RequestMapping does
			RequestMappingInfo info = handler.getKey().isEmpty() ? RequestMappingInfo.paths().build()
					: RequestMappingInfo.paths(handler.getKey()).methods(RequestMethod.GET).build();
			mapping.registerMapping(info, things, Things.class.getMethod(handler.getValue()));
		}
		StaticListableBeanFactory beans = new StaticListableBeanFactory(Map.of("mapping", mapping));
		MethodLimits methods = new MethodLimits(new RateLimitedMethods(),
				new LimitResolver(Map.of(), List.of(KeySource.GLOBAL)));
		ReactiveHandlerLimits limits = new ReactiveHandlerLimits(beans.getBeanProvider(RequestMappingHandlerMapping.class),
				methods, null, null);
		limits.afterSingletonsInstantiated();
		return limits;
	}

	static class Things {

		@RateLimited(capacity = 5, period = "1m")
		public String thing() {
			return "thing";
		}

		public String other() {
			return "other";
		}

	}

}
