package io.github.ratelimit.internal.web;

import java.util.Set;
import java.util.function.Supplier;
import java.util.stream.Collectors;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.web.bind.annotation.RequestMethod;
import org.springframework.web.method.HandlerMethod;
import org.springframework.web.servlet.mvc.method.RequestMappingInfo;
import org.springframework.web.servlet.mvc.method.annotation.RequestMappingHandlerMapping;

import io.github.ratelimit.internal.pipeline.AnnotatedLimit;
import io.github.ratelimit.internal.pipeline.MethodLimits;
import io.github.ratelimit.internal.pipeline.RateLimitedMethods;
import io.github.ratelimit.internal.pipeline.RouteNames;

/**
 * Resolves the limits of every {@code @RateLimited} handler under each of its route names
 * ({@code GET /orders/{id}}) at startup, so that invalid limits fail the startup and not
 * the first request, and records which routes each limit guards.
 */
public final class HandlerLimitsValidator implements SmartInitializingSingleton {

	private final ObjectProvider<RequestMappingHandlerMapping> mappings;

	private final RateLimitedMethods methods;

	private final Supplier<MethodLimits> limits;

	/**
	 * Creates a validator.
	 * @param mappings the handler mappings
	 * @param methods finds the annotations
	 * @param limits resolves the limits
	 */
	public HandlerLimitsValidator(ObjectProvider<RequestMappingHandlerMapping> mappings, RateLimitedMethods methods,
			Supplier<MethodLimits> limits) {
		this.mappings = mappings;
		this.methods = methods;
		this.limits = limits;
	}

	@Override
	public void afterSingletonsInstantiated() {
		this.mappings.orderedStream().forEach((mapping) -> mapping.getHandlerMethods().forEach(this::validate));
	}

	private void validate(AnnotatedLimit limit, String route, HandlerMethod handler) {
		this.limits.get().guard(limit, limit.nameFor(route, handler.getMethod()), route);
	}

	private void validate(RequestMappingInfo info, HandlerMethod handler) {
		for (AnnotatedLimit limit : this.methods.find(handler.getMethod(), handler.getBeanType())) {
			Set<String> verbs = info.getMethodsCondition()
				.getMethods()
				.stream()
				.map(RequestMethod::name)
				.collect(Collectors.toSet());
			for (String pattern : info.getPatternValues()) {
				if (verbs.isEmpty()) {
					validate(limit, RouteNames.of(verbs, "GET", pattern), handler);
				}
				for (String verb : verbs) {
					validate(limit, RouteNames.of(verbs, verb, pattern), handler);
				}
			}
		}
	}

}
