package io.github.ratelimit.benchmarks.overload;

import java.io.IOException;
import java.util.Optional;

import com.netflix.concurrency.limits.Limit;
import com.netflix.concurrency.limits.Limiter;
import com.netflix.concurrency.limits.limit.AIMDLimit;
import com.netflix.concurrency.limits.limit.Gradient2Limit;
import com.netflix.concurrency.limits.limit.VegasLimit;
import com.netflix.concurrency.limits.limiter.AbstractLimiter;
import com.netflix.concurrency.limits.limiter.AbstractPartitionedLimiter;
import jakarta.servlet.Filter;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletResponse;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.springframework.http.HttpStatus;

/**
 * The {@code netflix} variant: Netflix's partitioned adaptive limiter
 * (concurrency-limits-core), partitioned by the {@code X-Priority} header as its README
 * shows ({@code critical} gets its share of the limit, {@code sheddable} the rest), in a
 * filter that does what the project's jakarta servlet filter
 * ({@code ConcurrencyLimitServletFilter}, not published on Maven Central) does: acquire,
 * run the chain, report success when the chain returns (whatever the status) and ignore
 * the call when it throws; a rejected call gets the filter's configurable status, here 503
 * as the other variants answer.
 */
final class NetflixLimit implements LimitView {

	static final String PRIORITY_HEADER = "X-Priority";

	private final AbstractLimiter<HttpServletRequest> limiter;

	NetflixLimit(BenchSettings.Netflix settings) {
		double critical = settings.criticalShare();
		if (critical <= 0 || critical >= 1) {
			throw new IllegalArgumentException("bench.netflix.critical-share must be between 0 and 1: " + critical);
		}
		this.limiter = (AbstractLimiter<HttpServletRequest>) new HeaderPartitions().named("overload-bench")
			.limit(limit(settings.algorithm()))
			.partitionResolver((request) -> request.getHeader(PRIORITY_HEADER))
			.partition("critical", critical)
			.partition("sheddable", 1 - critical)
			.build();
	}

	private static Limit limit(String algorithm) {
		return switch (algorithm) {
			case "vegas" -> VegasLimit.newDefault();
			case "gradient2" -> Gradient2Limit.newDefault();
			case "aimd" -> AIMDLimit.newBuilder().build();
			default -> throw new IllegalArgumentException(
					"bench.netflix.algorithm must be vegas, gradient2 or aimd: " + algorithm);
		};
	}

	@Override
	public int limit() {
		return this.limiter.getLimit();
	}

	@Override
	public int inFlight() {
		return this.limiter.getInflight();
	}

	/**
	 * The servlet filter.
	 * @return a filter around the limiter
	 */
	Filter servletFilter() {
		return new Filter() {

			@Override
			public void doFilter(ServletRequest request, ServletResponse response, FilterChain chain)
					throws IOException, ServletException {
				Optional<Limiter.Listener> listener = NetflixLimit.this.limiter.acquire((HttpServletRequest) request);
				if (listener.isEmpty()) {
					((HttpServletResponse) response).setStatus(HttpStatus.SERVICE_UNAVAILABLE.value());
					return;
				}
				try {
					chain.doFilter(request, response);
				}
				catch (IOException | ServletException | RuntimeException ex) {
					listener.get().onIgnore();
					throw ex;
				}
				listener.get().onSuccess();
			}

		};
	}

	/** The limiter's builder, partitioned by a function of the request. */
	private static final class HeaderPartitions
			extends AbstractPartitionedLimiter.Builder<HeaderPartitions, HttpServletRequest> {

		@Override
		protected HeaderPartitions self() {
			return this;
		}

	}

}
