package io.github.ratelimit.internal.webflux;

import java.util.Map;

import reactor.core.publisher.Mono;

import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.core.io.buffer.DataBufferUtils;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatusCode;
import org.springframework.http.server.reactive.ServerHttpRequest;
import org.springframework.http.server.reactive.ServerHttpResponse;
import org.springframework.web.server.ServerWebExchange;

import io.github.ratelimit.internal.pipeline.ProblemResponse;
import io.github.ratelimit.internal.pipeline.RequestCosts;
import io.github.ratelimit.internal.pipeline.RequestLimits;
import io.github.ratelimit.internal.pipeline.RequestRateLimiter;

/**
 * The reactive side of what the pipeline answers: the request state as an exchange
 * attribute, headers set as each stage admits the request, problem responses written as the
 * body.
 */
final class ReactiveResponses {

	/**
	 * Longest request body a rejection reads and drops before it answers, so that the
	 * connection stays open for the client's next request: as much as Tomcat reads of a body
	 * no one asked for ({@code maxSwallowSize}). A longer body, or one of unknown length, is
	 * not read, and the answer closes the connection.
	 */
	static final long MAX_DROPPED_BODY = 2 * 1024 * 1024;

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
	 * The costs an exchange settles once its response is final.
	 * @param exchange the exchange
	 * @param create whether to create them when the exchange has none yet
	 * @return the costs, or {@code null} when it has none and {@code create} is false
	 */
	static RequestCosts costs(ServerWebExchange exchange, boolean create) {
		Object costs = exchange.getAttributes().get(RequestCosts.ATTRIBUTE);
		if (costs instanceof RequestCosts existing || !create) {
			return (costs instanceof RequestCosts existing) ? existing : null;
		}
		RequestCosts created = new RequestCosts();
		exchange.getAttributes().put(RequestCosts.ATTRIBUTE, created);
		return created;
	}

	/**
	 * Sets the rate limit headers of every stage decided for the exchange so far, as each
	 * stage admits it: a later stage sets them again with its own decisions added, a
	 * problem response written here replaces them (see {@link #withdraw}), and the handler
	 * runs after them, so what it sets wins. Set at once rather than as the response commits, which would
	 * give every limited response a commit action to run.
	 */
	static void advertise(ServerWebExchange exchange, RequestLimits state, RequestRateLimiter limiter) {
		ServerHttpResponse response = exchange.getResponse();
		if (response.isCommitted()) {
			return;
		}
		HttpHeaders headers = response.getHeaders();
		// the headers take strings: the one each value needs is made here
		limiter.writeHeaders(state, (name, value) -> headers.set(name, value.toString()));
	}

	/**
	 * Removes the rate limit headers earlier stages set, before a problem response that
	 * may carry none of its own (a {@code 503}).
	 */
	static void withdraw(ServerWebExchange exchange, RequestLimits state, RequestRateLimiter limiter) {
		ServerHttpResponse response = exchange.getResponse();
		if (response.isCommitted()) {
			return;
		}
		HttpHeaders headers = response.getHeaders();
		limiter.headers(state, (name, value) -> headers.remove(name));
	}

	/**
	 * Writes a problem response to a request that nothing will read, once the whole request
	 * has arrived. Reactor Netty before 1.3.8 stops reading a keep-alive connection when a
	 * request that waited behind an unfinished one is answered before its end has been read
	 * (reactor/reactor-netty#4361), so the client's next request is never answered: the
	 * answer waits for the rest of the request, which it drops. A body the client sends only
	 * after {@code 100 Continue} is not asked for; a body too long to drop is not read, and
	 * the answer closes the connection instead.
	 */
	static Mono<Void> reject(ServerWebExchange exchange, ProblemResponse problem) {
		ServerHttpRequest request = exchange.getRequest();
		HttpHeaders headers = request.getHeaders();
		if ("100-continue".equalsIgnoreCase(headers.getFirst(HttpHeaders.EXPECT))) {
			return write(exchange, problem);
		}
		if (headers.containsHeader(HttpHeaders.TRANSFER_ENCODING) || headers.getContentLength() > MAX_DROPPED_BODY) {
			exchange.getResponse().getHeaders().setConnection("close");
			return write(exchange, problem);
		}
		// a body read before (by an earlier filter) cannot be read again: the answer goes at once
		return request.getBody()
			.<Void>handle((buffer, sink) -> DataBufferUtils.release(buffer))
			.onErrorComplete()
			.then(Mono.defer(() -> write(exchange, problem)));
	}

	/** Writes a problem response as the exchange's answer. */
	static Mono<Void> write(ServerWebExchange exchange, ProblemResponse problem) {
		ServerHttpResponse response = exchange.getResponse();
		if (response.isCommitted()) {
			return Mono.empty();
		}
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
