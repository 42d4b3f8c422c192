package io.github.ratelimit.internal.webflux;

import java.util.Locale;
import java.util.concurrent.CompletableFuture;

import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;
import reactor.core.publisher.SignalType;

import org.springframework.core.Ordered;
import org.springframework.http.HttpStatusCode;
import org.springframework.http.MediaType;
import org.springframework.web.ErrorResponse;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebFilter;
import org.springframework.web.server.WebFilterChain;

import io.github.ratelimit.RequestPriority;
import io.github.ratelimit.internal.overload.OverloadLimiter.Outcome;
import io.github.ratelimit.internal.overload.OverloadLimiter.Permit;
import io.github.ratelimit.internal.pipeline.OverloadGate;

/**
 * Admits reactive requests under the adaptive limit on calls in flight, or answers them
 * {@code 503} when their priority's share of the limit is full. Runs before the route
 * filter and Spring Security's {@code WebFilterChainProxy}.
 * <p>
 * A request holds its place until the chain ends, which is when its response body has
 * been written, streams included: completing releases it by the final status, an error
 * as overload unless it carries a 4xx status, a cancellation (the client went away)
 * without teaching the limit anything. Nothing here blocks.
 * <p>
 * A critical request that finds the limit full waits for a place, at most
 * {@code ratelimit.overload.critical-wait}, without holding a thread: when a finishing
 * request hands its place over, or the wait ends with a {@code 503}, it goes on on its own
 * connection's event loop. A request cancelled while it waits leaves the queue, and a
 * place handed to it at that moment is given back.
 */
public class OverloadWebFilter implements WebFilter, Ordered {

	/** Default order: before the route filter (-110) and Spring Security (-100). */
	public static final int DEFAULT_ORDER = -120;

	private final OverloadGate gate;

	private final int order;

	/**
	 * Creates a filter.
	 * @param gate the overload gate
	 * @param order the filter order
	 */
	public OverloadWebFilter(OverloadGate gate, int order) {
		this.gate = gate;
		this.order = order;
	}

	@Override
	public Mono<Void> filter(ServerWebExchange exchange, WebFilterChain chain) {
		RequestPriority priority = this.gate.priority(new ReactiveRateLimitRequest(exchange.getRequest(), null),
				encodesSeparators(exchange.getRequest().getURI().getRawPath()));
		if (priority == null) {
			return chain.filter(exchange);
		}
		// decided when the exchange subscribes, so that a re-subscription takes a permit of its own
		return Mono.defer(() -> {
			CompletableFuture<Permit> pending = this.gate.acquireAsync(priority);
			if (pending.isDone()) {
				return admitted(pending.join(), priority, exchange, chain);
			}
			// the wait ends on another thread (the one that freed a place, or the timer): go
			// on, or answer 503, on the exchange's event loop
			return Mono.fromCompletionStage(ServerEventLoops.completeOn(exchange, pending))
				// a hand-off that cannot go on (the event loop refused it at shutdown) gives its place back
				.doOnError((failure) -> abandon(pending))
				.flatMap((permit) -> admitted(permit, priority, exchange, chain))
				.doOnCancel(() -> abandon(pending))
				.doOnDiscard(Permit.class, (permit) -> permit.release(Outcome.IGNORED));
		});
	}

	private Mono<Void> admitted(Permit permit, RequestPriority priority, ServerWebExchange exchange,
			WebFilterChain chain) {
		if (permit.shed()) {
			return ReactiveResponses.reject(exchange, this.gate.shed(priority));
		}
		return chain.filter(exchange)
			.doOnError((failure) -> permit.release(outcome(failure)))
			.doFinally((signal) -> {
				if (signal == SignalType.CANCEL) {
					permit.release(Outcome.IGNORED);
				}
				else if (signal == SignalType.ON_COMPLETE) {
					MediaType type = exchange.getResponse().getHeaders().getContentType();
					permit.release(OverloadGate.outcome(status(exchange), (type != null) ? type.toString() : null));
				}
			});
	}

	/**
	 * The exchange was cancelled: leave the queue, or give back a place handed over that
	 * did not reach the chain (a permit that did is released by the chain's own end too,
	 * and a permit is released once).
	 */
	private static void abandon(CompletableFuture<Permit> pending) {
		if (!pending.cancel(false)) {
			Permit permit = pending.getNow(Permit.SHED);
			permit.release(Outcome.IGNORED);
		}
	}

	/**
	 * An error escaping the chain is answered by the web exception handlers: with its own
	 * status when it carries one (a 4xx says nothing about capacity), else a 500.
	 */
	private static Outcome outcome(Throwable failure) {
		if (failure instanceof ErrorResponse response) {
			return OverloadGate.outcome(response.getStatusCode().value());
		}
		return OverloadGate.outcome(failure);
	}

	/** Whether a raw path encodes a slash, a backslash or a dot inside a segment. */
	static boolean encodesSeparators(@Nullable String rawPath) {
		if (rawPath == null || rawPath.indexOf('%') < 0) {
			return false;
		}
		String path = rawPath.toLowerCase(Locale.ROOT);
		return path.contains("%2f") || path.contains("%5c") || path.contains("%2e");
	}

	private static int status(ServerWebExchange exchange) {
		HttpStatusCode status = exchange.getResponse().getStatusCode();
		return (status != null) ? status.value() : 200;
	}

	@Override
	public int getOrder() {
		return this.order;
	}

}
