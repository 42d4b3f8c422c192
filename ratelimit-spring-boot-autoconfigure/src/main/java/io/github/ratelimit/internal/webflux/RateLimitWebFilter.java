package io.github.ratelimit.internal.webflux;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import reactor.core.publisher.Mono;

import org.springframework.core.Ordered;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatusCode;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebFilter;
import org.springframework.web.server.WebFilterChain;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.internal.pipeline.RequestCosts;
import io.github.ratelimit.internal.pipeline.RequestLimits;
import io.github.ratelimit.internal.pipeline.RequestRateLimiter;
import io.github.ratelimit.internal.pipeline.RouteLimit;
import io.github.ratelimit.internal.pipeline.Verdict;
import io.github.ratelimit.store.Acquisition;

/**
 * Enforces {@code ratelimit.routes} on reactive requests. Runs before Spring Security's
 * {@code WebFilterChainProxy}, so route limits keyed on the client IP, a tenant or
 * nothing also hold for requests Spring Security answers itself. Route limits keyed on
 * the principal wait for {@link RateLimitHandlerWebFilter}, after authentication.
 */
public class RateLimitWebFilter implements WebFilter, Ordered {

	private static final Log logger = LogFactory.getLog(RateLimitWebFilter.class);

	/** Default order: before Spring Security's web filter chain (order -100). */
	public static final int DEFAULT_ORDER = -110;

	/** Exchange attribute marking that the request is settled as its response commits. */
	private static final String SETTLING = RateLimitWebFilter.class.getName() + ".SETTLING";

	private final RequestRateLimiter limiter;

	private final int order;

	/**
	 * Creates a filter.
	 * @param limiter the request limiter
	 * @param order the filter order
	 */
	public RateLimitWebFilter(RequestRateLimiter limiter, int order) {
		this.limiter = limiter;
		this.order = order;
	}

	@Override
	public Mono<Void> filter(ServerWebExchange exchange, WebFilterChain chain) {
		if (!this.limiter.hasRoutes()) {
			return chain.filter(exchange);
		}
		ReactiveRateLimitRequest request = new ReactiveRateLimitRequest(exchange.getRequest(), null);
		List<RouteLimit> matched = this.limiter.matchRoutes(request);
		if (matched.isEmpty()) {
			// no state for a request no route matches: nothing to record, settle or give back
			return chain.filter(exchange);
		}
		if (this.limiter.decidesOnCallingThread() && decidesAlone(exchange, matched)) {
			// nothing follows the stage: the request keeps no state, and the headers are written now
			HttpHeaders headers = exchange.getResponse().getHeaders();
			Verdict verdict = this.limiter.decideAlone(request, matched.get(0),
					(name, value) -> headers.set(name, value.toString()));
			return verdict.proceeds() ? chain.filter(exchange) : ReactiveResponses.reject(exchange, verdict.problem());
		}
		RequestLimits state = ReactiveResponses.state(exchange);
		if (this.limiter.decidesOnCallingThread()) {
			// a store deciding on the calling thread (in memory) would decide on this event
			// loop when asked without blocking too: decided in place, as the servlet filter does
			Verdict verdict = this.limiter.decideRouteStage(request, matched, state);
			if (verdict == null) {
				return chain.filter(exchange);
			}
			return apply(exchange, verdict, state, this.limiter, chain)
				.doOnCancel(() -> abandon(exchange, state, this.limiter));
		}
		List<Acquisition> now = this.limiter.routeStage(request, matched, state);
		if (now.isEmpty()) {
			return chain.filter(exchange);
		}
		// the chain runs a filter when the exchange subscribes to it: the store is asked then
		return decide(exchange, now, state, 0, this.limiter, chain);
	}

	/**
	 * Whether the route stage leaves nothing to do ({@link RequestRateLimiter#decidesAlone})
	 * and never holds the request for a drain slot: a leaky bucket keeps its state, so that
	 * a client gone before its slot gets the grant back.
	 */
	private boolean decidesAlone(ServerWebExchange exchange, List<RouteLimit> matched) {
		return this.limiter.decidesAlone(matched)
				&& matched.get(0).definition().limit().algorithm() != Algorithm.LEAKY_BUCKET
				&& !exchange.getAttributes().containsKey(RequestLimits.ATTRIBUTE);
	}

	/**
	 * Decides a stage and carries out its verdict. A store that decided on the calling
	 * thread (in memory) is answered at once, without operators to wait for it.
	 */
	static Mono<Void> decide(ServerWebExchange exchange, List<Acquisition> acquisitions, RequestLimits state,
			long maxWaitMicros, RequestRateLimiter limiter, WebFilterChain chain) {
		return decide(exchange, acquisitions, state, maxWaitMicros, limiter, chain, null);
	}

	/**
	 * Decides a stage as {@link #decide(ServerWebExchange, List, RequestLimits, long,
	 * RequestRateLimiter, WebFilterChain)} does, telling the request's costs which decision
	 * admitted the limits that settle.
	 */
	static Mono<Void> decide(ServerWebExchange exchange, List<Acquisition> acquisitions, RequestLimits state,
			long maxWaitMicros, RequestRateLimiter limiter, WebFilterChain chain, RequestCosts costs) {
		CompletableFuture<Verdict> decided = limiter.decideAsync(acquisitions, state, maxWaitMicros, costs)
			.toCompletableFuture();
		// a client gone before the stage began (while its decision or its drain slot was
		// awaited) keeps nothing it was granted; once the request went on, it keeps its charge
		if (decided.isDone() && !decided.isCompletedExceptionally()) {
			return apply(exchange, decided.join(), state, limiter, chain)
				.doOnCancel(() -> abandon(exchange, state, limiter));
		}
		// a decision from another thread (a Redis reply, a timer) goes on on the request's event loop
		return Mono.fromCompletionStage(ServerEventLoops.completeOn(exchange, decided))
			.doOnCancel(() -> abandon(exchange, state, limiter))
			.flatMap((verdict) -> apply(exchange, verdict, state, limiter, chain));
	}

	/** A client going away is no error: noted at debug level only. */
	private static void abandon(ServerWebExchange exchange, RequestLimits state, RequestRateLimiter limiter) {
		if (logger.isDebugEnabled()) {
			logger.debug(exchange.getLogPrefix() + "Client went away from " + exchange.getRequest().getMethod() + " "
					+ exchange.getRequest().getPath().value() + "; stages that let it on keep their charge");
		}
		limiter.abandon(state);
	}

	/**
	 * Gives back what limits that do not count the final status consumed, and what
	 * concurrency limits hold while the request runs. Registered once, and only for
	 * requests that such a limit admitted, so that other requests pay nothing for it.
	 * <ul>
	 * <li>As the response commits, its status is final, whoever wrote it (a handler, an
	 * exception handler, Spring Security, the error handler), and the client has not seen
	 * it yet: status-counting limits settle then, waiting for the store without blocking,
	 * so the client's next request finds the quota back. A response whose length is known
	 * then has its body ready, so concurrency permits come back then too.</li>
	 * <li>A response streaming a body of unknown length is still in flight: its permits come
	 * back when the exchange completes (or fails).</li>
	 * <li>A cancelled exchange (the client went away) settles nothing. Its status is never
	 * final, so limits counting some statuses count it; and the work it started may go on
	 * (cancelling a {@code Mono.fromCallable} on {@code boundedElastic} interrupts the
	 * callable at most), so concurrency permits are held until their lease expires.</li>
	 * </ul>
	 */
	private static Mono<Void> settling(ServerWebExchange exchange, RequestLimits state, RequestRateLimiter limiter,
			Mono<Void> chain) {
		if (!state.countsByStatus() || exchange.getAttributes().putIfAbsent(SETTLING, Boolean.TRUE) != null) {
			return chain;
		}
		exchange.getResponse().beforeCommit(() -> Mono.fromCompletionStage(() -> {
			boolean bodyKnown = exchange.getResponse().getHeaders().getContentLength() >= 0;
			return ServerEventLoops.completeOn(exchange, bodyKnown ? limiter.settleAsync(state, status(exchange))
					: limiter.settleCountedAsync(state, status(exchange)));
		}));
		Mono<Void> released = Mono.defer(() -> Mono
			.fromCompletionStage(() -> ServerEventLoops.completeOn(exchange, limiter.releaseHeldAsync(state))));
		return chain.onErrorResume((failure) -> released.then(Mono.error(failure))).then(released);
	}

	private static int status(ServerWebExchange exchange) {
		HttpStatusCode status = exchange.getResponse().getStatusCode();
		return (status != null) ? status.value() : 200;
	}

	/**
	 * Carries out a verdict: the problem response, or the headers and the drain delay of
	 * an admitted stage before the chain goes on.
	 */
	static Mono<Void> apply(ServerWebExchange exchange, Verdict verdict, RequestLimits state,
			RequestRateLimiter limiter, WebFilterChain chain) {
		if (!verdict.proceeds()) {
			// what earlier stages advertised does not describe the answer: the problem says its own
			ReactiveResponses.withdraw(exchange, state, limiter);
			return ReactiveResponses.reject(exchange, verdict.problem());
		}
		ReactiveResponses.advertise(exchange, state, limiter);
		if (verdict.delayMicros() > 0) {
			// a leaky bucket smooths the output: the request goes on at its drain slot, no thread held
			return settling(exchange, state, limiter, Mono.delay(Duration.ofNanos(verdict.delayMicros() * 1_000))
				.then(ServerEventLoops.resumeOn(exchange))
				.then(Mono.defer(() -> proceed(exchange, state, chain))));
		}
		return settling(exchange, state, limiter, proceed(exchange, state, chain));
	}

	/**
	 * Lets the request go on to what its stage admitted; from here a client going away
	 * keeps the stage's charge. A client already gone was given the grant back: nothing runs.
	 */
	private static Mono<Void> proceed(ServerWebExchange exchange, RequestLimits state, WebFilterChain chain) {
		return state.begin() ? chain.filter(exchange) : Mono.empty();
	}

	@Override
	public int getOrder() {
		return this.order;
	}

}
