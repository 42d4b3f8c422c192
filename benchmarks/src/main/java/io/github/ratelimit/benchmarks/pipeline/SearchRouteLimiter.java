package io.github.ratelimit.benchmarks.pipeline;

import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.regex.Pattern;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;

import org.springframework.web.util.pattern.PathPatternParser;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.KeySource;
import io.github.ratelimit.internal.core.LimitDefinition;
import io.github.ratelimit.internal.core.RateLimitClock;
import io.github.ratelimit.store.RateLimitObserver;
import io.github.ratelimit.internal.core.RateLimiter;
import io.github.ratelimit.internal.memory.InMemoryRateLimitStore;
import io.github.ratelimit.internal.metrics.RateLimitMetrics;
import io.github.ratelimit.internal.pipeline.ClientIpResolver;
import io.github.ratelimit.internal.pipeline.HeaderStyle;
import io.github.ratelimit.internal.pipeline.RateLimitResponses;
import io.github.ratelimit.internal.pipeline.RequestIdentityResolver;
import io.github.ratelimit.internal.pipeline.RequestRateLimiter;
import io.github.ratelimit.internal.pipeline.RouteLimit;
import io.github.ratelimit.store.RateLimit;

/**
 * The request limiter of the HTTP benchmark's search endpoint: one IP-keyed
 * sliding-window-counter route limit for GET, in memory, with a capacity no benchmark
 * reaches, so that every request is admitted, in an application with no limited methods.
 */
final class SearchRouteLimiter {

	private SearchRouteLimiter() {
	}

	/**
	 * Builds the limiter.
	 * @param pattern the route's path pattern, which also names the limit
	 * @param metrics whether decisions are counted in a Micrometer registry
	 * @return the request limiter
	 */
	static RequestRateLimiter create(String pattern, boolean metrics) {
		RateLimit limit = RateLimit.of("GET " + pattern, Algorithm.SLIDING_WINDOW_COUNTER, 1_000_000_000L,
				Duration.ofSeconds(1));
		LimitDefinition definition = LimitDefinition.builder(limit).key(List.of(KeySource.IP)).build();
		RouteLimit route = new RouteLimit(new PathPatternParser().parse(pattern), Set.of("GET"), definition);
		InMemoryRateLimitStore store = new InMemoryRateLimitStore(RateLimitClock.system(), 100_000);
		RateLimitObserver observer = metrics ? new RateLimitMetrics(new SimpleMeterRegistry(), () -> store, (name) -> null)
				: RateLimitObserver.NONE;
		RequestIdentityResolver identities = new RequestIdentityResolver(new ClientIpResolver(List.of(), 64),
				"X-Tenant-Id", Pattern.compile("[A-Za-z0-9-]{1,64}"), List.of());
		return RequestRateLimiter.builder(new RateLimiter(store, observer), new RateLimitResponses(HeaderStyle.IETF))
			.identities(identities)
			.routes(List.of(route))
			// no method carries @RateLimited: nothing joins a request after its route stage
			.callLimits(() -> false)
			.build();
	}

}
