package io.github.ratelimit.benchmarks.pipeline;

import java.net.InetSocketAddress;
import java.util.concurrent.TimeUnit;

import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

import org.springframework.http.HttpHeaders;
import org.springframework.mock.http.server.reactive.MockServerHttpRequest;
import org.springframework.mock.web.server.MockServerWebExchange;
import org.springframework.web.server.WebFilterChain;

import io.github.ratelimit.internal.webflux.RateLimitWebFilter;

/**
 * The reactive route filter on one exchange, without a server: the limited endpoint of
 * the HTTP benchmark (one IP-keyed sliding-window-counter route limit on
 * {@code /api/search}, in memory, counted in Micrometer, admitted, its headers set before
 * the chain runs) against its unlimited twin ({@code /api/search/products}, which
 * the filter matches against the route and passes on). Both build the same mock exchange
 * and commit its response, so the difference between them is what the limit adds to a
 * reactive request (docs/benchmarks.md, section 3).
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(2)
public class ReactiveFilterBenchmark {

	private static final InetSocketAddress CLIENT = new InetSocketAddress("203.0.113.7", 40_000);

	private final WebFilterChain chain = (exchange) -> exchange.getResponse().setComplete();

	private RateLimitWebFilter filter;

	@Setup
	public void setUp() {
		this.filter = new RateLimitWebFilter(SearchRouteLimiter.create("/api/search", true),
				RateLimitWebFilter.DEFAULT_ORDER);
		// the premise: the limited exchange is decided and advertised, its twin is not
		if (limited().getFirst("RateLimit") == null || unlimitedTwin().getFirst("RateLimit") != null) {
			throw new IllegalStateException("the limited exchange must be advertised and its twin not");
		}
	}

	@Benchmark
	public HttpHeaders limited() {
		return exchange("/api/search?q=cable");
	}

	@Benchmark
	public HttpHeaders unlimitedTwin() {
		return exchange("/api/search/products?q=cable");
	}

	private HttpHeaders exchange(String uri) {
		MockServerWebExchange exchange = MockServerWebExchange
			.from(MockServerHttpRequest.get(uri).remoteAddress(CLIENT));
		this.filter.filter(exchange, this.chain).block();
		return exchange.getResponse().getHeaders();
	}

}
