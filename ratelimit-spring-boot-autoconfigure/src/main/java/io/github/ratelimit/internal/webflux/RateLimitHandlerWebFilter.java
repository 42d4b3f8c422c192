package io.github.ratelimit.internal.webflux;

import java.security.Principal;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletionStage;

import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.core.Ordered;
import org.springframework.http.HttpStatusCode;
import org.springframework.util.LinkedMultiValueMap;
import org.springframework.util.MultiValueMap;
import org.springframework.web.cors.reactive.CorsUtils;
import org.springframework.web.method.HandlerMethod;
import org.springframework.web.reactive.result.method.annotation.RequestMappingHandlerMapping;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebFilter;
import org.springframework.web.server.WebFilterChain;

import io.github.ratelimit.RateLimitUsage;
import io.github.ratelimit.internal.pipeline.PrincipalNames;
import io.github.ratelimit.internal.pipeline.RequestCosts;
import io.github.ratelimit.internal.pipeline.RequestLimits;
import io.github.ratelimit.internal.pipeline.RequestRateLimiter;
import io.github.ratelimit.store.Acquisition;

/**
 * Decides, once Spring Security has authenticated a reactive request, the route limits
 * that waited for the principal together with the {@code @RateLimited} limits of the
 * handler the request is routed to, in one store call. A rejection is answered here, so
 * no {@code @ExceptionHandler} of the application can turn it into anything but a
 * {@code 429}.
 */
public class RateLimitHandlerWebFilter implements WebFilter, Ordered {

	/** Default order: after Spring Security's web filter chain (order -100). */
	public static final int DEFAULT_ORDER = 0;

	private static final MultiValueMap<String, String> EMPTY_FORM = new LinkedMultiValueMap<>(0);

	private final RequestRateLimiter limiter;

	private final ReactiveHandlerLimits handlers;

	private final ObjectProvider<RequestMappingHandlerMapping> mappings;

	/** The mappings in the order the dispatcher asks them, looked up once on first use. */
	private volatile List<RequestMappingHandlerMapping> ordered;

	/**
	 * Creates a filter.
	 * @param limiter the request limiter
	 * @param handlers the limits of handler methods
	 * @param mappings finds the handler of a request
	 */
	public RateLimitHandlerWebFilter(RequestRateLimiter limiter, ReactiveHandlerLimits handlers,
			ObjectProvider<RequestMappingHandlerMapping> mappings) {
		this.limiter = limiter;
		this.handlers = handlers;
		this.mappings = mappings;
	}

	@Override
	public Mono<Void> filter(ServerWebExchange exchange, WebFilterChain chain) {
		RequestLimits existing = exchange.getAttribute(RequestLimits.ATTRIBUTE);
		boolean deferred = existing != null && existing.hasDeferred();
		if (CorsUtils.isPreFlightRequest(exchange.getRequest())) {
			return chain.filter(exchange);
		}
		boolean limitedHandler = this.handlers.hasHandlerLimits() && this.handlers.mayRouteToLimited(exchange.getRequest());
		if (!deferred && !limitedHandler) {
			return chain.filter(exchange);
		}
		return exchange.getPrincipal()
			.map(Optional::of)
			.defaultIfEmpty(Optional.empty())
			.flatMap((principal) -> handler(exchange, limitedHandler).flatMap((handler) -> form(exchange, handler.orElse(null))
				.flatMap((form) -> decide(exchange, chain, principal.orElse(null), handler.orElse(null), form))));
	}

	private Mono<Optional<HandlerMethod>> handler(ServerWebExchange exchange, boolean limitedHandler) {
		if (!limitedHandler) {
			return Mono.just(Optional.empty());
		}
		// the first mapping that knows the request, in the order the dispatcher asks them
		return Flux.fromIterable(orderedMappings())
			.concatMap((mapping) -> mapping.getHandler(exchange))
			.next()
			.map((handler) -> (handler instanceof HandlerMethod method) ? Optional.of(method)
					: Optional.<HandlerMethod>empty())
			.defaultIfEmpty(Optional.empty());
	}

	/** Form fields for key expressions; WebFlux caches them, so the handler can still read them. */
	private Mono<MultiValueMap<String, String>> form(ServerWebExchange exchange, HandlerMethod handler) {
		if (handler == null || !this.handlers.readsForm(handler)) {
			return Mono.just(EMPTY_FORM);
		}
		return exchange.getFormData();
	}

	private List<RequestMappingHandlerMapping> orderedMappings() {
		List<RequestMappingHandlerMapping> mappings = this.ordered;
		if (mappings == null) {
			// not per request: looking beans up and sorting them costs more than routing
			mappings = this.mappings.orderedStream().toList();
			this.ordered = mappings;
		}
		return mappings;
	}

	private Mono<Void> decide(ServerWebExchange exchange, WebFilterChain chain, Principal principal,
			HandlerMethod handler, MultiValueMap<String, String> form) {
		ReactiveRateLimitRequest request = new ReactiveRateLimitRequest(exchange.getRequest(),
				PrincipalNames.authenticated(principal));
		RequestLimits state = ReactiveResponses.state(exchange);
		List<Acquisition> acquisitions = new ArrayList<>(2);
		long maxWaitMicros = 0;
		ReactiveHandlerLimits.Bound bound = (handler != null) ? this.handlers.bind(exchange, handler, request, form) : null;
		if (bound != null) {
			acquisitions.addAll(bound.acquisitions());
			maxWaitMicros = bound.maxWait().toNanos() / 1_000;
		}
		acquisitions.addAll(this.limiter.takeDeferred(request, state));
		if (acquisitions.isEmpty()) {
			return chain.filter(exchange);
		}
		RequestCosts costs = ReactiveResponses.costs(exchange, false);
		if (costs == null || !costs.settles()) {
			return RateLimitWebFilter.decide(exchange, acquisitions, state, maxWaitMicros, this.limiter, chain, null);
		}
		// as the response commits its status and headers are final, and the handler's value
		// known; a streamed response settles as its stream ends instead (it said so when subscribed)
		exchange.getResponse()
			.beforeCommit(() -> costs.streamed() ? Mono.empty() : Mono.fromCompletionStage(() -> settle(exchange, costs)));
		RequestCosts.StreamEnd streamEnd = (completed) -> completed ? settle(exchange, costs)
				: costs.settleEnded(this.limiter.costs(), true);
		// the handler reports its actual cost to the usage in its Reactor context
		WebFilterChain reporting = (next) -> chain.filter(next)
			.contextWrite((context) -> context.put(RateLimitUsage.class, costs.usage())
				.put(RequestCosts.class, costs)
				.put(RequestCosts.StreamEnd.class, streamEnd));
		return RateLimitWebFilter.decide(exchange, acquisitions, state, maxWaitMicros, this.limiter, reporting, costs);
	}

	/** Settles once the response's status and headers are final, going on on the event loop. */
	private CompletionStage<Void> settle(ServerWebExchange exchange, RequestCosts costs) {
		return ServerEventLoops.completeOn(exchange, this.limiter.settleCosts(costs, status(exchange),
				(name) -> exchange.getResponse().getHeaders().getFirst(name), true));
	}

	private static int status(ServerWebExchange exchange) {
		HttpStatusCode status = exchange.getResponse().getStatusCode();
		return (status != null) ? status.value() : 200;
	}

	@Override
	public int getOrder() {
		return DEFAULT_ORDER;
	}

}
