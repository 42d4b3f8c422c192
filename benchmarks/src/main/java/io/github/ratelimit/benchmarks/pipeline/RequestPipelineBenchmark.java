package io.github.ratelimit.benchmarks.pipeline;

import java.security.Principal;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;
import org.openjdk.jmh.infra.Blackhole;

import io.github.ratelimit.RateLimitRequest;
import io.github.ratelimit.internal.pipeline.RateLimitResponses;
import io.github.ratelimit.internal.pipeline.RequestLimits;
import io.github.ratelimit.internal.pipeline.RequestRateLimiter;
import io.github.ratelimit.internal.pipeline.RouteLimit;
import io.github.ratelimit.internal.pipeline.Verdict;

/**
 * What the limiter itself does for one admitted HTTP request with one IP-keyed route
 * limit, without a web server: match the route, resolve the client IP and the identity,
 * decide in the in-memory store, count the decision in Micrometer (or not), and build the
 * {@code RateLimit} and {@code RateLimit-Policy} header values. This is the work a web
 * stack's filter adds to a request (docs/benchmarks.md, section 3).
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(2)
public class RequestPipelineBenchmark {

	/** Whether decisions are counted in a Micrometer registry, as with Actuator on the classpath. */
	@Param({ "true", "false" })
	boolean metrics;

	/** The route's pattern: literal text, or with a wildcard the path must be parsed for. */
	@Param({ "/api/search", "/api/search/**" })
	String pattern;

	private RequestRateLimiter pipeline;

	private final RateLimitRequest request = new Request("GET", "/api/search", "203.0.113.7");

	private final RateLimitRequest elsewhere = new Request("GET", "/api/products/7", "203.0.113.7");

	/** Receives the headers as a web stack does, before it makes the strings its response takes. */
	private RateLimitResponses.HeaderSink headers;

	/** Receives the headers as the servlet and WebFlux adapters do: one string per value. */
	private RateLimitResponses.HeaderSink headerStrings;

	@Setup
	public void setUp(Blackhole blackhole) {
		this.pipeline = SearchRouteLimiter.create(this.pattern, this.metrics);
		this.headers = (name, value) -> blackhole.consume(value);
		this.headerStrings = (name, value) -> blackhole.consume(value.toString());
	}

	/**
	 * One admitted request, as the servlet filter limits it in an application whose only
	 * limits are routes: the route stage decided and the headers rendered, with no state
	 * kept for the request since nothing can follow the stage.
	 */
	@Benchmark
	public void admittedRequest(Blackhole blackhole) {
		admit(blackhole, this.headers);
	}

	/** As {@link #admittedRequest}, with the header values made into the strings a response takes. */
	@Benchmark
	public void admittedRequestWithHeaderStrings(Blackhole blackhole) {
		admit(blackhole, this.headerStrings);
	}

	private void admit(Blackhole blackhole, RateLimitResponses.HeaderSink sink) {
		List<RouteLimit> matched = this.pipeline.matchRoutes(this.request);
		if (this.pipeline.decidesAlone(matched)) {
			// as the filter does when nothing can follow the stage: no state, headers written at once
			blackhole.consume(this.pipeline.decideAlone(this.request, matched.get(0), sink).proceeds());
			return;
		}
		RequestLimits state = new RequestLimits();
		Verdict verdict = this.pipeline.decideRouteStage(this.request, matched, state);
		blackhole.consume(verdict.proceeds());
		this.pipeline.writeHeaders(state, sink);
	}

	/** What a request no route limits pays: finding that no route matches it. */
	@Benchmark
	public List<RouteLimit> unlimitedRequest() {
		return this.pipeline.matchRoutes(this.elsewhere);
	}

	private record Request(String method, String path, String remoteAddress) implements RateLimitRequest {

		@Override
		public List<String> headers(String name) {
			return List.of();
		}

		@Override
		public Principal principal() {
			return null;
		}

		@Override
		public Object nativeRequest() {
			return this;
		}

	}

}
