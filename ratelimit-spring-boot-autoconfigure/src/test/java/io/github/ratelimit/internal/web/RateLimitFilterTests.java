package io.github.ratelimit.internal.web;

import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.regex.Pattern;

import org.junit.jupiter.api.Test;

import org.springframework.mock.web.MockFilterChain;
import org.springframework.mock.web.MockHttpServletRequest;
import org.springframework.mock.web.MockHttpServletResponse;
import org.springframework.web.util.pattern.PathPatternParser;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.KeySource;
import io.github.ratelimit.internal.core.LimitDefinition;
import io.github.ratelimit.internal.core.RateLimiter;
import io.github.ratelimit.internal.memory.InMemoryRateLimitStore;
import io.github.ratelimit.internal.pipeline.ClientIpResolver;
import io.github.ratelimit.internal.pipeline.HeaderStyle;
import io.github.ratelimit.internal.pipeline.RateLimitResponses;
import io.github.ratelimit.internal.pipeline.RequestIdentityResolver;
import io.github.ratelimit.internal.pipeline.RequestLimits;
import io.github.ratelimit.internal.pipeline.RequestRateLimiter;
import io.github.ratelimit.internal.pipeline.RouteLimit;
import io.github.ratelimit.store.RateLimit;
import io.github.ratelimit.store.contract.MutableClock;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The servlet filter keeps a state for a request only when something can follow its
 * route stage, and answers the same either way.
 */
class RateLimitFilterTests {

	private static final RouteLimit HEALTH = new RouteLimit(PathPatternParser.defaultInstance.parse("/health"),
			Set.of("GET"), LimitDefinition.builder(RateLimit.of("GET /health", Algorithm.FIXED_WINDOW, 2,
					Duration.ofMinutes(1)))
				.key(List.of(KeySource.IP))
				.build());

	@Test
	void aRequestWhoseRouteStageNothingCanFollowKeepsNoStateAndGetsItsHeaders() throws Exception {
		RateLimitFilter filter = new RateLimitFilter(limiter(false));

		MockHttpServletRequest request = get();
		MockHttpServletResponse response = new MockHttpServletResponse();
		MockFilterChain chain = new MockFilterChain();
		filter.doFilter(request, response, chain);

		assertThat(chain.getRequest()).as("went on").isSameAs(request);
		assertThat(request.getAttribute(RequestLimits.ATTRIBUTE)).isNull();
		assertThat(response.getHeader("RateLimit-Policy")).isEqualTo("\"GET /health\";q=2;w=60");
		assertThat(response.getHeader("RateLimit")).isEqualTo("\"GET /health\";r=1;t=60");
	}

	@Test
	void aRequestALimitedCallMayJoinKeepsItsStateAndGetsTheSameHeaders() throws Exception {
		RateLimitFilter filter = new RateLimitFilter(limiter(true));

		MockHttpServletRequest request = get();
		MockHttpServletResponse response = new MockHttpServletResponse();
		filter.doFilter(request, response, new MockFilterChain());

		assertThat(request.getAttribute(RequestLimits.ATTRIBUTE)).isInstanceOf(RequestLimits.class);
		assertThat(response.getHeader("RateLimit")).isEqualTo("\"GET /health\";r=1;t=60");
	}

	@Test
	void aRejectedRouteStageNothingCanFollowAnswersWithTheProblemAndStopsTheChain() throws Exception {
		RateLimitFilter filter = new RateLimitFilter(limiter(false));
		for (int i = 0; i < 2; i++) {
			filter.doFilter(get(), new MockHttpServletResponse(), new MockFilterChain());
		}

		MockHttpServletResponse response = new MockHttpServletResponse();
		MockFilterChain chain = new MockFilterChain();
		filter.doFilter(get(), response, chain);

		assertThat(response.getStatus()).isEqualTo(429);
		assertThat(response.getHeader("Retry-After")).isNotNull();
		assertThat(response.getContentType()).startsWith("application/problem+json");
		assertThat(chain.getRequest()).as("stopped").isNull();
	}

	private static MockHttpServletRequest get() {
		MockHttpServletRequest request = new MockHttpServletRequest("GET", "/health");
		request.setRemoteAddr("203.0.113.7");
		return request;
	}

	private static RequestRateLimiter limiter(boolean callLimits) {
		RequestIdentityResolver identities = new RequestIdentityResolver(new ClientIpResolver(List.of(), 64),
				"X-Tenant-Id", Pattern.compile("[A-Za-z0-9-]{1,64}"), List.of());
		// a clock at the start of a minute: the window resets in 60 seconds
		return RequestRateLimiter
			.builder(new RateLimiter(
					new InMemoryRateLimitStore(new MutableClock(MutableClock.DEFAULT_START_MICROS), 1000)),
					new RateLimitResponses(HeaderStyle.IETF))
			.identities(identities)
			.routes(List.of(HEALTH))
			.callLimits(() -> callLimits)
			.build();
	}

}
