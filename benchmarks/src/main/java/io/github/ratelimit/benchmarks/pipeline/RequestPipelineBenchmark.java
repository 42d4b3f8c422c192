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
import io.github.ratelimit.internal.pipeline.RequestLimits;
import io.github.ratelimit.internal.pipeline.RequestRateLimiter;
import io.github.ratelimit.internal.pipeline.RouteLimit;
import io.github.ratelimit.internal.pipeline.Verdict;
import io.github.ratelimit.store.Acquisition;

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

	@Setup
	public void setUp() {
		this.pipeline = SearchRouteLimiter.create(this.pattern, this.metrics);
	}

	@Benchmark
	public void admittedRequest(Blackhole blackhole) {
		RequestLimits state = new RequestLimits();
		List<Acquisition> now = this.pipeline.routeStage(this.request, state);
		Verdict verdict = this.pipeline.decide(now, state);
		blackhole.consume(verdict.proceeds());
		this.pipeline.headers(state, (name, value) -> blackhole.consume(value));
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
