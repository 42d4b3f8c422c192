package io.github.ratelimit.internal.web;

import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.regex.Pattern;

import jakarta.servlet.AsyncEvent;
import jakarta.servlet.AsyncListener;
import jakarta.servlet.FilterChain;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import org.springframework.mock.web.MockAsyncContext;
import org.springframework.mock.web.MockFilterChain;
import org.springframework.mock.web.MockHttpServletRequest;
import org.springframework.mock.web.MockHttpServletResponse;
import org.springframework.web.util.pattern.PathPatternParser;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.KeySource;
import io.github.ratelimit.internal.core.Identities;
import io.github.ratelimit.internal.core.LimitDefinition;
import io.github.ratelimit.internal.core.RateLimiter;
import io.github.ratelimit.internal.core.SettledCost;
import io.github.ratelimit.internal.memory.InMemoryRateLimitStore;
import io.github.ratelimit.internal.pipeline.ClientIpResolver;
import io.github.ratelimit.internal.pipeline.HeaderStyle;
import io.github.ratelimit.internal.pipeline.RateLimitResponses;
import io.github.ratelimit.internal.pipeline.RequestCosts;
import io.github.ratelimit.internal.pipeline.RequestIdentityResolver;
import io.github.ratelimit.internal.pipeline.RequestLimits;
import io.github.ratelimit.internal.pipeline.RequestRateLimiter;
import io.github.ratelimit.internal.pipeline.RouteLimit;
import io.github.ratelimit.store.Acquisition;
import io.github.ratelimit.store.RateLimit;
import io.github.ratelimit.store.RateLimitResult;
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

	private static final RateLimit TOKENS = RateLimit.of("tokens", Algorithm.TOKEN_BUCKET, 1000, Duration.ofHours(1));

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

	@Test
	void aStreamThatFailsMidwaySettlesWhatItReportedAndNothingMoreWhenItCompletes() throws Exception {
		MutableClock clock = new MutableClock(MutableClock.DEFAULT_START_MICROS);
		InMemoryRateLimitStore store = new InMemoryRateLimitStore(clock, 1000);
		RequestRateLimiter limiter = limiter(store, false, List.of());
		RateLimitFilter filter = new RateLimitFilter(limiter);
		LimitDefinition tokens = LimitDefinition.builder(TOKENS)
			.key(List.of(KeySource.GLOBAL))
			.settledCost(new SettledCost("#estimate", null, "X-Tokens-Used"))
			.build();
		MockHttpServletRequest request = get();
		request.setAsyncSupported(true);
		MockHttpServletResponse response = new MockHttpServletResponse();
		// the handler reserves 500, starts streaming, and reports 120 before its client leaves
		filter.doFilter(request, response, streaming(request, store, tokens, 120));
		MockAsyncContext async = (MockAsyncContext) request.getAsyncContext();
		AsyncEvent event = new AsyncEvent(async, request, response, new IOException("client went away"));
		for (AsyncListener listener : async.getListeners()) {
			listener.onError(event);
		}
		assertThat(store.inspect(TOKENS, Identities.GLOBAL).remaining()).isEqualTo(880);
		// the completion that follows finds nothing left to settle, not even the header's cost
		response.setHeader("X-Tokens-Used", "7");
		for (AsyncListener listener : async.getListeners()) {
			listener.onComplete(event);
		}
		assertThat(store.inspect(TOKENS, Identities.GLOBAL).remaining()).isEqualTo(880);
	}

	@ParameterizedTest
	@CsvSource({ "true, 500", "false, 1000" })
	void aStreamThatFailsBeforeReportingKeepsOrGivesBackItsReservationAsConfigured(boolean keep, long remaining)
			throws Exception {
		MutableClock clock = new MutableClock(MutableClock.DEFAULT_START_MICROS);
		InMemoryRateLimitStore store = new InMemoryRateLimitStore(clock, 1000);
		RateLimitFilter filter = new RateLimitFilter(limiter(store, false, List.of(), keep));
		LimitDefinition tokens = LimitDefinition.builder(TOKENS)
			.key(List.of(KeySource.GLOBAL))
			.settledCost(new SettledCost("#estimate", null, null))
			.build();
		MockHttpServletRequest request = get();
		request.setAsyncSupported(true);
		MockHttpServletResponse response = new MockHttpServletResponse();
		// the handler reserves 500 and starts streaming; its client leaves before it reports
		filter.doFilter(request, response, streaming(request, store, tokens, -1));
		MockAsyncContext async = (MockAsyncContext) request.getAsyncContext();
		AsyncEvent event = new AsyncEvent(async, request, response, new IOException("client went away"));
		for (AsyncListener listener : async.getListeners()) {
			listener.onError(event);
		}
		assertThat(store.inspect(TOKENS, Identities.GLOBAL).remaining()).isEqualTo(remaining);
	}

	private static RateLimitResult acquire(InMemoryRateLimitStore store, List<Acquisition> acquisitions) {
		RateLimitResult result = new RateLimiter(store).acquire(acquisitions);
		assertThat(result.allowed()).isTrue();
		return result;
	}

	private static MockHttpServletRequest get() {
		MockHttpServletRequest request = new MockHttpServletRequest("GET", "/health");
		request.setRemoteAddr("203.0.113.7");
		return request;
	}

	private static RequestRateLimiter limiter(boolean callLimits) {
		return limiter(new InMemoryRateLimitStore(new MutableClock(MutableClock.DEFAULT_START_MICROS), 1000),
				callLimits, List.of(HEALTH));
	}

	private static RequestRateLimiter limiter(InMemoryRateLimitStore store, boolean callLimits,
			List<RouteLimit> routes) {
		return limiter(store, callLimits, routes, true);
	}

	private static RequestRateLimiter limiter(InMemoryRateLimitStore store, boolean callLimits,
			List<RouteLimit> routes, boolean failedCallsKeepReservation) {
		RequestIdentityResolver identities = new RequestIdentityResolver(new ClientIpResolver(List.of(), 64),
				"X-Tenant-Id", Pattern.compile("[A-Za-z0-9-]{1,64}"), List.of());
		// a clock at the start of a minute: the window resets in 60 seconds
		return RequestRateLimiter
			.builder(new RateLimiter(store), new RateLimitResponses(HeaderStyle.IETF))
			.identities(identities)
			.routes(routes)
			.callLimits(() -> callLimits)
			.failedCallsKeepReservation(failedCallsKeepReservation)
			.build();
	}

	/**
	 * A handler that reserves 500 of a settling limit, starts streaming, and reports
	 * {@code reported} (none when negative) before its client leaves.
	 */
	private static FilterChain streaming(MockHttpServletRequest request, InMemoryRateLimitStore store,
			LimitDefinition tokens, long reported) {
		return (req, res) -> {
			RequestCosts costs = ServletRateLimitRequest.costsOrCreate(request);
			List<Acquisition> reserved = tokens.acquisitions(Identities.GLOBAL, null, 500);
			costs.settleOnly(reserved, tokens);
			costs.admitted(reserved, acquire(store, reserved));
			request.startAsync();
			if (reported >= 0) {
				costs.usage().report(reported);
			}
		};
	}

}
