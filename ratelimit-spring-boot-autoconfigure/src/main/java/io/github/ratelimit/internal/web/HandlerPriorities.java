package io.github.ratelimit.internal.web;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.util.ClassUtils;
import org.springframework.web.method.HandlerMethod;
import org.springframework.web.servlet.mvc.method.RequestMappingInfo;
import org.springframework.web.servlet.mvc.method.annotation.RequestMappingHandlerMapping;
import org.springframework.web.util.pattern.PathPattern;
import org.springframework.web.util.pattern.PathPatternParser;
import org.springframework.web.util.pattern.PatternParseException;

import io.github.ratelimit.RequestPriority;
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
		boolean[] declared = { false };
		this.mappings.orderedStream().forEach((mapping) -> {
			for (Map.Entry<RequestMappingInfo, HandlerMethod> entry : mapping.getHandlerMethods().entrySet()) {
				HandlerMethod handler = entry.getValue();
				RequestPriority priority = PriorityRoute.declared(handler.getMethod(),
						ClassUtils.getUserClass(handler.getBeanType()));
				declared[0] |= (priority != null);
				// every handler takes part, annotated or not, so that a request is ranked by the
				// handler that serves it, not by an annotated pattern that merely matches its path
				{
					Set<String> methods = entry.getKey()
						.getMethodsCondition()
						.getMethods()
						.stream()
						.map(Enum::name)
						.collect(Collectors.toSet());
					for (PathPattern pattern : patterns(entry.getKey())) {
						routes.add(new PriorityRoute(pattern, methods, priority));
					}
				}
			}
		});
		// without one annotated handler there is nothing to look up per request
		this.gate.handlerPriorities(declared[0] ? routes : List.of());
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
