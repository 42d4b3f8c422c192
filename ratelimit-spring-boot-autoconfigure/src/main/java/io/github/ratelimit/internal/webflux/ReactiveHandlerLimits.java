package io.github.ratelimit.internal.webflux;

import java.lang.reflect.Method;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.Collectors;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.expression.spel.support.StandardEvaluationContext;
import org.springframework.http.server.PathContainer;
import org.springframework.http.server.reactive.ServerHttpRequest;
import org.springframework.util.MultiValueMap;
import org.springframework.web.bind.annotation.RequestMethod;
import org.springframework.web.method.HandlerMethod;
import org.springframework.web.reactive.HandlerMapping;
import org.springframework.web.reactive.result.method.RequestMappingInfo;
import org.springframework.web.reactive.result.method.annotation.RequestMappingHandlerMapping;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.util.pattern.PathPattern;

import io.github.ratelimit.PlanResolver;
import io.github.ratelimit.RateLimitRequest;
import io.github.ratelimit.internal.core.LimitDefinition;
import io.github.ratelimit.internal.pipeline.AnnotatedLimit;
import io.github.ratelimit.internal.pipeline.CallContext;
import io.github.ratelimit.internal.pipeline.CallContextProvider;
import io.github.ratelimit.internal.pipeline.DetachedCallContext;
import io.github.ratelimit.internal.pipeline.MethodLimits;
import io.github.ratelimit.internal.pipeline.RequestRateLimiter;
import io.github.ratelimit.internal.pipeline.RouteNames;
import io.github.ratelimit.store.Acquisition;

/**
 * The {@code @RateLimited} limits of WebFlux handler methods. They are decided when the
 * request is routed, before the handler runs (so no exception handler of the
 * application stands between a rejection and its {@code 429}, and a wait delays the
 * subscription instead of holding a thread); the method interceptor leaves handler
 * methods alone. At startup every limited handler is resolved under each of its route
 * names, so invalid limits fail the startup.
 */
public final class ReactiveHandlerLimits implements SmartInitializingSingleton, CallContextProvider {

	private final ObjectProvider<RequestMappingHandlerMapping> mappings;

	private final MethodLimits limits;

	private final RequestRateLimiter limiter;

	private final PlanResolver plans;

	private final Set<Method> handlers = ConcurrentHashMap.newKeySet();

	private final Map<Method, Set<String>> declaredMethods = new ConcurrentHashMap<>();

	/**
	 * The path patterns of the limited handlers: a request whose path none of them
	 * matches cannot be routed to one, so it is not routed a second time to find out.
	 */
	private volatile PathPattern[] limitedPatterns = new PathPattern[0];

	/**
	 * Whether a limited handler has an empty pattern (a mapping without a path): which
	 * paths it serves is left to the dispatcher's lookup, so every request is routed ahead.
	 */
	private volatile boolean limitedEverywhere;

	/**
	 * Creates the handler limits.
	 * @param mappings the reactive handler mappings
	 * @param limits the limits of annotated methods
	 * @param limiter the request limiter
	 * @param plans finds the plan of a request
	 */
	public ReactiveHandlerLimits(ObjectProvider<RequestMappingHandlerMapping> mappings, MethodLimits limits,
			RequestRateLimiter limiter, PlanResolver plans) {
		this.mappings = mappings;
		this.limits = limits;
		this.limiter = limiter;
		this.plans = plans;
	}

	@Override
	public void afterSingletonsInstantiated() {
		this.mappings.orderedStream().forEach((mapping) -> mapping.getHandlerMethods().forEach(this::register));
	}

	private void register(RequestMappingInfo info, HandlerMethod handler) {
		List<AnnotatedLimit> found = this.limits.find(handler.getMethod(), handler.getBeanType());
		if (found.isEmpty()) {
			return;
		}
		this.handlers.add(handler.getMethod());
		Set<PathPattern> patterns = info.getPatternsCondition().getPatterns();
		if (patterns.isEmpty() || patterns.stream().anyMatch((pattern) -> pattern.getPatternString().isEmpty())) {
			this.limitedEverywhere = true;
		}
		Set<PathPattern> all = new LinkedHashSet<>(List.of(this.limitedPatterns));
		all.addAll(patterns);
		this.limitedPatterns = all.toArray(new PathPattern[0]);
		Set<String> verbs = info.getMethodsCondition()
			.getMethods()
			.stream()
			.map(RequestMethod::name)
			.collect(Collectors.toSet());
		for (AnnotatedLimit limit : found) {
			for (PathPattern pattern : info.getPatternsCondition().getPatterns()) {
				if (verbs.isEmpty()) {
					guard(limit, RouteNames.of(verbs, "GET", pattern.getPatternString()), handler);
				}
				for (String verb : verbs) {
					guard(limit, RouteNames.of(verbs, verb, pattern.getPatternString()), handler);
				}
			}
		}
	}

	private void guard(AnnotatedLimit limit, String route, HandlerMethod handler) {
		this.limits.guard(limit, limit.nameFor(route, handler.getMethod()), route);
	}

	/**
	 * Whether any handler method is rate limited.
	 * @return whether there are handler limits
	 */
	boolean hasHandlerLimits() {
		return !this.handlers.isEmpty();
	}

	/**
	 * Whether a request may be routed to a limited handler: some limited handler's path
	 * pattern matches its path. Only then is the request routed to find its handler
	 * before the dispatcher does; the rest, usually most requests, skip that second
	 * lookup.
	 * @param request the request
	 * @return whether a limited handler's pattern matches the path
	 */
	boolean mayRouteToLimited(ServerHttpRequest request) {
		if (this.limitedEverywhere) {
			return true;
		}
		PathContainer path = request.getPath().pathWithinApplication();
		for (PathPattern pattern : this.limitedPatterns) {
			if (pattern.matches(path)) {
				return true;
			}
		}
		return false;
	}

	@Override
	public CallContext current() {
		return DetachedCallContext.INSTANCE;
	}

	@Override
	public boolean limitsElsewhere(Method method) {
		return this.handlers.contains(method);
	}

	/**
	 * The handler's limits for an exchange that was routed to it, bound to the request.
	 * @param exchange the exchange, after handler mapping
	 * @param handler the handler
	 * @param request the request, with its principal
	 * @return the acquisitions and the longest wait the handler's own annotations allow,
	 * or {@code null} when the handler is not rate limited
	 */
	Bound bind(ServerWebExchange exchange, HandlerMethod handler, RateLimitRequest request,
			MultiValueMap<String, String> form) {
		if (!this.handlers.contains(handler.getMethod())) {
			return null;
		}
		Method method = handler.getMethod();
		PathPattern pattern = exchange.getAttribute(HandlerMapping.BEST_MATCHING_PATTERN_ATTRIBUTE);
		Set<String> declared = this.declaredMethods.computeIfAbsent(method,
				(key) -> RouteNames.declaredMethods(handler.getBeanType(), key));
		String route = (pattern != null) ? RouteNames.of(declared, request.method(), pattern.getPatternString()) : null;
		StandardEvaluationContext evaluation = null;
		List<Acquisition> acquisitions = new ArrayList<>(2);
		Duration maxWait = Duration.ZERO;
		String plan = null;
		boolean planResolved = false;
		for (AnnotatedLimit limit : this.limits.find(method, handler.getBeanType())) {
			LimitDefinition definition = this.limits.definition(limit, limit.nameFor(route, method));
			String identity = null;
			if (limit.keyExpression() != null) {
				evaluation = (evaluation != null) ? evaluation : variables(exchange, form);
				identity = this.limits.evaluate(limit, definition, evaluation);
			}
			if (identity == null) {
				identity = this.limiter.identity(definition, request);
			}
			if (!planResolved && !definition.plans().isEmpty()) {
				plan = this.plans.resolve(request.principal());
				planResolved = true;
			}
			List<Acquisition> limited;
			if (definition.settledCost().estimate() != null) {
				evaluation = (evaluation != null) ? evaluation : variables(exchange, form);
				limited = this.limiter.costs().reserve(definition, identity, plan, evaluation);
			}
			else {
				limited = definition.acquisitions(identity, plan);
			}
			ReactiveResponses.state(exchange).countOnly(limited, definition.countStatuses());
			if (definition.settles()) {
				ReactiveResponses.costs(exchange, true).settleOnly(limited, definition);
			}
			acquisitions.addAll(limited);
			if (limit.settings().maxWait() != null && definition.maxWait().compareTo(maxWait) > 0) {
				maxWait = definition.maxWait();
			}
		}
		return new Bound(acquisitions, maxWait);
	}

	/**
	 * Whether a handler's key expressions need the request's form fields.
	 * @param handler the handler
	 * @return whether any of its limits has a key expression
	 */
	boolean readsForm(HandlerMethod handler) {
		if (!this.handlers.contains(handler.getMethod())) {
			return false;
		}
		for (AnnotatedLimit limit : this.limits.find(handler.getMethod(), handler.getBeanType())) {
			if (limit.keyExpression() != null) {
				return true;
			}
		}
		return false;
	}

	/**
	 * What a handler's key expression can read before its arguments are resolved: form
	 * fields, query parameters and path variables by name (a later source wins), and
	 * {@code #request}.
	 */
	private static StandardEvaluationContext variables(ServerWebExchange exchange, MultiValueMap<String, String> form) {
		StandardEvaluationContext evaluation = new StandardEvaluationContext();
		form.forEach((name, values) -> {
			if (!values.isEmpty()) {
				evaluation.setVariable(name, values.get(0));
			}
		});
		exchange.getRequest().getQueryParams().forEach((name, values) -> {
			if (!values.isEmpty()) {
				evaluation.setVariable(name, values.get(0));
			}
		});
		Map<String, String> variables = exchange.getAttribute(HandlerMapping.URI_TEMPLATE_VARIABLES_ATTRIBUTE);
		if (variables != null) {
			variables.forEach(evaluation::setVariable);
		}
		evaluation.setVariable("request", exchange.getRequest());
		return evaluation;
	}

	/**
	 * A handler's limits bound to one request.
	 *
	 * @param acquisitions the acquisitions
	 * @param maxWait the longest wait its annotations allow
	 */
	record Bound(List<Acquisition> acquisitions, Duration maxWait) {
	}

}
