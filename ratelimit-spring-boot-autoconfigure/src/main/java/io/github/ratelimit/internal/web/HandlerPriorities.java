package io.github.ratelimit.internal.web;

import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.web.servlet.mvc.method.RequestMappingInfo;
import org.springframework.web.servlet.mvc.method.annotation.RequestMappingHandlerMapping;
import org.springframework.web.util.pattern.PathPattern;
import org.springframework.web.util.pattern.PathPatternParser;
import org.springframework.web.util.pattern.PatternParseException;

import io.github.ratelimit.internal.pipeline.OverloadGate;
import io.github.ratelimit.internal.pipeline.PriorityRoute;

/**
 * Reads the priorities that Spring MVC handlers declare with {@code @OverloadPriority}
 * once every handler is mapped, as the patterns and methods they serve, so that the
 * overload filter ranks a request by its path without looking its handler up.
 */
public final class HandlerPriorities implements SmartInitializingSingleton {

	private final ObjectProvider<RequestMappingHandlerMapping> mappings;

	private final OverloadGate gate;

	/**
	 * Creates the reader.
	 * @param mappings the handler mappings
	 * @param gate the gate the priorities are given to
	 */
	public HandlerPriorities(ObjectProvider<RequestMappingHandlerMapping> mappings, OverloadGate gate) {
		this.mappings = mappings;
		this.gate = gate;
	}

	@Override
	public void afterSingletonsInstantiated() {
		List<PriorityRoute> routes = new ArrayList<>();
		this.mappings.orderedStream()
			.forEach((mapping) -> routes.addAll(PriorityRoute.ofHandlers(mapping.getHandlerMethods(),
					(info) -> info.getMethodsCondition().getMethods().stream().map(Enum::name).collect(Collectors.toSet()),
					HandlerPriorities::patterns)));
		this.gate.handlerPriorities(routes);
	}

	/** The mapping's parsed patterns, or its pattern strings parsed when it matches with an {@code AntPathMatcher}. */
	private static List<PathPattern> patterns(RequestMappingInfo info) {
		if (info.getPathPatternsCondition() != null) {
			return List.copyOf(info.getPathPatternsCondition().getPatterns());
		}
		List<PathPattern> patterns = new ArrayList<>();
		for (String value : info.getPatternValues()) {
			try {
				patterns.add(PathPatternParser.defaultInstance.parse(value));
			}
			catch (PatternParseException ex) {
				// an AntPathMatcher pattern path patterns cannot express: left to the other sources
			}
		}
		return patterns;
	}

}
