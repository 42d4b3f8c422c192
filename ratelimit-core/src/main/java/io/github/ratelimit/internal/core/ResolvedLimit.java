package io.github.ratelimit.internal.core;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * A limit as resolved for one place that applies it, with where each of its values came
 * from: what operators see of the effective configuration.
 *
 * @param origin the place: {@code @RateLimited on <Class.method(..)>}, a route property
 * such as {@code ratelimit.routes[0]}, or the policy property of a policy no place uses
 * @param definition the effective definition there
 * @param sources by property ({@code algorithm}, {@code capacity}, {@code refillTokens},
 * {@code period}, {@code cost}, {@code key}, {@code keyExpression}, {@code failMode},
 * {@code shadow}, {@code calendar}, {@code timeZone}, {@code unit}): {@value #ANNOTATION}, the property
 * that set it (such as {@code ratelimit.policies.search.capacity}) or {@value #DEFAULT}
 * @param routes the routes the place guards, such as {@code GET /orders/{id}}; empty
 * outside web requests
 */
public record ResolvedLimit(String origin, LimitDefinition definition, Map<String, String> sources,
		List<String> routes) {

	/** Source of a value set by the {@code @RateLimited} annotation. */
	public static final String ANNOTATION = "annotation";

	/** Source of a value set nowhere, so the default applies. */
	public static final String DEFAULT = "default";

	public ResolvedLimit {
		Objects.requireNonNull(origin, "origin must not be null");
		Objects.requireNonNull(definition, "definition must not be null");
		sources = Collections.unmodifiableMap(new LinkedHashMap<>(sources));
		routes = List.copyOf(routes);
	}

	/**
	 * The limit name.
	 * @return the name of the limit, which identifies its buckets
	 */
	public String name() {
		return this.definition.limit().name();
	}

}
