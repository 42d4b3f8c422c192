package io.github.ratelimit.benchmarks.overload;

import java.io.IOException;
import java.util.concurrent.Semaphore;

import jakarta.servlet.Filter;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletResponse;
import jakarta.servlet.http.HttpServletResponse;
import org.springframework.http.HttpStatus;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebFilter;
import org.springframework.web.server.WebFilterChain;


/**
 * The {@code fixed} variant: at most {@code limit} calls in flight, whatever their
 * priority; a call over the limit is answered 503 at once rather than queued. (Spring
 * Framework 7's {@code @ConcurrencyLimit} blocks the caller until a permit frees, which
 * under overload queues requests as no protection does, so the benchmark sheds instead.)
 */
final class FixedLimit implements LimitView {

	private final int limit;

	private final Semaphore permits;

	FixedLimit(int limit) {
		this.limit = limit;
		this.permits = new Semaphore(limit);
	}

	@Override
	public int limit() {
		return this.limit;
	}

	@Override
	public int inFlight() {
		return this.limit - this.permits.availablePermits();
	}

	/**
	 * The servlet filter.
	 * @return a filter that holds a permit while the chain runs
	 */
	Filter servletFilter() {
		return new Filter() {

			@Override
			public void doFilter(ServletRequest request, ServletResponse response, FilterChain chain)
					throws IOException, ServletException {
				if (!FixedLimit.this.permits.tryAcquire()) {
					((HttpServletResponse) response).setStatus(HttpStatus.SERVICE_UNAVAILABLE.value());
					return;
				}
				try {
					chain.doFilter(request, response);
				}
				finally {
					FixedLimit.this.permits.release();
				}
			}

		};
	}

	/**
	 * The WebFlux filter, for {@code GET /work} only.
	 * @return a filter that holds a permit until the exchange ends or is cancelled
	 */
	WebFilter webFilter() {
		return (ServerWebExchange exchange, WebFilterChain chain) -> {
			if (!exchange.getRequest().getPath().value().equals("/work")) {
				return chain.filter(exchange);
			}
			if (!this.permits.tryAcquire()) {
				exchange.getResponse().setStatusCode(HttpStatus.SERVICE_UNAVAILABLE);
				return exchange.getResponse().setComplete();
			}
			return chain.filter(exchange).doFinally((signal) -> this.permits.release());
		};
	}

}
