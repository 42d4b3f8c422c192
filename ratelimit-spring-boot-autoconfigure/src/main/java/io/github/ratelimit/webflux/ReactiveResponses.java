package io.github.ratelimit.webflux;

import java.util.Map;

import reactor.core.publisher.Mono;

import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatusCode;
import org.springframework.http.server.reactive.ServerHttpResponse;
import org.springframework.web.server.ServerWebExchange;

import io.github.ratelimit.pipeline.ProblemResponse;
import io.github.ratelimit.pipeline.RequestLimits;
import io.github.ratelimit.pipeline.RequestRateLimiter;

/**
 * The reactive side of what the pipeline answers: the request state as an exchange
 * attribute, headers set when the response commits, problem responses written as the
 * body.
 */
final class ReactiveResponses {

	private static final String ADVERTISED = ReactiveResponses.class.getName() + ".advertised";

	private static final String ANSWERED = ReactiveResponses.class.getName() + ".answered";

	private ReactiveResponses() {
	}

	/** The limiting state of an exchange, created on first use. */
	static RequestLimits state(ServerWebExchange exchange) {
		Object state = exchange.getAttributes().get(RequestLimits.ATTRIBUTE);
		if (state instanceof RequestLimits existing) {
			return existing;
		}
		RequestLimits created = new RequestLimits();
		exchange.getAttributes().put(RequestLimits.ATTRIBUTE, created);
		return created;
	}

	/**
	 * Sets the rate limit headers of every stage decided for the exchange when the
	 * response commits, so that later stages are advertised too. Registered once.
	 */
	static void advertise(ServerWebExchange exchange, RequestLimits state, RequestRateLimiter limiter) {
		if (exchange.getAttributes().putIfAbsent(ADVERTISED, Boolean.TRUE) != null) {
			return;
		}
		ServerHttpResponse response = exchange.getResponse();
		response.beforeCommit(() -> {
			if (exchange.getAttributes().containsKey(ANSWERED)) {
				// a problem response carries its own headers
				return Mono.empty();
			}
			HttpHeaders headers = response.getHeaders();
			limiter.headers(state, (name, value) -> {
				if (!headers.containsHeader(name)) {
					headers.set(name, value);
				}
			});
			return Mono.empty();
		});
	}

	/** Writes a problem response as the exchange's answer. */
	static Mono<Void> write(ServerWebExchange exchange, ProblemResponse problem) {
		ServerHttpResponse response = exchange.getResponse();
		if (response.isCommitted()) {
			return Mono.empty();
		}
		exchange.getAttributes().put(ANSWERED, Boolean.TRUE);
		response.setStatusCode(HttpStatusCode.valueOf(problem.status()));
		HttpHeaders headers = response.getHeaders();
		for (Map.Entry<String, String> header : problem.headers().entrySet()) {
			headers.set(header.getKey(), header.getValue());
		}
		headers.set(HttpHeaders.CONTENT_TYPE, ProblemResponse.CONTENT_TYPE);
		headers.setContentLength(problem.body().length);
		DataBuffer body = response.bufferFactory().wrap(problem.body());
		return response.writeWith(Mono.just(body));
	}

}
