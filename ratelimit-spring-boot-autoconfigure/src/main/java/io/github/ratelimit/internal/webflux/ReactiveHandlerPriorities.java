package io.github.ratelimit.internal.webflux;

import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.web.reactive.result.method.annotation.RequestMappingHandlerMapping;

import io.github.ratelimit.internal.pipeline.OverloadGate;
import io.github.ratelimit.internal.pipeline.PriorityRoute;

/**
 * Reads the priorities that WebFlux handlers declare with {@code @OverloadPriority} once
 * every handler is mapped, as the patterns and methods they serve, so that the overload
 * filter ranks a request by its path without looking its handler up on an event loop.
 */
public final class ReactiveHandlerPriorities implements SmartInitializingSingleton {

	private final ObjectProvider<RequestMappingHandlerMapping> mappings;

	private final OverloadGate gate;

	/**
	 * Creates the reader.
	 * @param mappings the handler mappings
	 * @param gate the gate the priorities are given to
	 */
	public ReactiveHandlerPriorities(ObjectProvider<RequestMappingHandlerMapping> mappings, OverloadGate gate) {
		this.mappings = mappings;
		this.gate = gate;
	}

	@Override
	public void afterSingletonsInstantiated() {
		List<PriorityRoute> routes = new ArrayList<>();
		this.mappings.orderedStream()
			.forEach((mapping) -> routes.addAll(PriorityRoute.ofHandlers(mapping.getHandlerMethods(),
					(info) -> info.getMethodsCondition().getMethods().stream().map(Enum::name).collect(Collectors.toSet()),
					(info) -> info.getPatternsCondition().getPatterns())));
		this.gate.handlerPriorities(routes);
	}

}
