package io.github.ratelimit.internal.webflux;

import org.springframework.core.MethodParameter;
import org.springframework.web.reactive.BindingContext;
import org.springframework.web.reactive.result.method.SyncHandlerMethodArgumentResolver;
import org.springframework.web.server.ServerWebExchange;

import io.github.ratelimit.RateLimitUsage;

/**
 * Resolves a reactive handler method parameter of type {@link RateLimitUsage} to the
 * usage of the exchange, where the handler reports its actual cost for the limits that
 * settle once the response is final.
 */
public final class RateLimitUsageArgumentResolver implements SyncHandlerMethodArgumentResolver {

	@Override
	public boolean supportsParameter(MethodParameter parameter) {
		return parameter.getParameterType() == RateLimitUsage.class;
	}

	@Override
	public Object resolveArgumentValue(MethodParameter parameter, BindingContext bindingContext,
			ServerWebExchange exchange) {
		return ReactiveResponses.costs(exchange, true).usage();
	}

}
