package io.github.ratelimit.internal.pipeline;

import java.util.ArrayList;
import java.util.List;

import io.github.ratelimit.KeySource;
import io.github.ratelimit.PlanResolver;
import io.github.ratelimit.RateLimitRequest;
import io.github.ratelimit.internal.core.LimitDefinition;
import io.github.ratelimit.store.Acquisition;

/**
 * Binds limits to the identity and plan of a request: turns the route limits a request
 * matches into the acquisitions of its stages, leaving those keyed on the principal for
 * the stage after authentication.
 */
public final class LimitBinder {

	private final RequestIdentityResolver identities;

	private final PlanResolver plans;

	/**
	 * Creates a binder.
	 * @param identities finds identities
	 * @param plans finds the plan of a request, for limits whose policy has plans
	 */
	public LimitBinder(RequestIdentityResolver identities, PlanResolver plans) {
		this.identities = identities;
		this.plans = plans;
	}

	/**
	 * The first stage of a request, before authentication, for the route limits it
	 * matches: binds those that need no principal and leaves those keyed on the principal
	 * for the handler.
	 * @param request the request
	 * @param matched the route limits it matches
	 * @param state the request's state
	 * @return the acquisitions to decide now, empty when none
	 */
	public List<Acquisition> routeStage(RateLimitRequest request, List<RouteLimit> matched, RequestLimits state) {
		if (matched.isEmpty()) {
			return List.of();
		}
		if (matched.size() == 1) {
			// one route, the usual case: its acquisitions are the stage's, with no list to fill
			LimitDefinition definition = matched.get(0).definition();
			if (definition.needsPrincipal()) {
				state.defer(matched);
				return List.of();
			}
			List<Acquisition> bound = bindAll(definition, request);
			state.countOnly(bound, definition.countStatuses());
			return bound;
		}
		List<Acquisition> now = new ArrayList<>(matched.size());
		List<RouteLimit> deferred = new ArrayList<>(0);
		for (RouteLimit route : matched) {
			if (route.definition().needsPrincipal()) {
				deferred.add(route);
			}
			else {
				List<Acquisition> bound = bindAll(route.definition(), request);
				state.countOnly(bound, route.definition().countStatuses());
				now.addAll(bound);
			}
		}
		if (!deferred.isEmpty()) {
			state.defer(deferred);
		}
		return now;
	}

	/**
	 * Whether a limit binds to one acquisition of its own limit now, as a route stage
	 * decides it in place: keyed without the principal, with no plans, no candidate, and
	 * every status counted.
	 * @param definition the limit
	 * @return whether it binds alone
	 */
	static boolean bindsAlone(LimitDefinition definition) {
		return definition.candidate() == null && definition.countStatuses().countsAll() && !definition.needsPrincipal();
	}

	/**
	 * Binds the route limits that waited for the principal; taken once.
	 * @param request the request, now authenticated
	 * @param state the request's state
	 * @return their acquisitions, empty when none waited or they were taken already
	 */
	public List<Acquisition> takeDeferred(RateLimitRequest request, RequestLimits state) {
		if (!state.hasDeferred()) {
			return List.of();
		}
		List<Acquisition> acquisitions = new ArrayList<>(2);
		for (RouteLimit route : state.takeDeferred()) {
			List<Acquisition> bound = bindAll(route.definition(), request);
			state.countOnly(bound, route.definition().countStatuses());
			acquisitions.addAll(bound);
		}
		return acquisitions;
	}

	/**
	 * Binds a limit, and its candidate if it has one, to the identity and plan of a
	 * request.
	 * @param definition the limit
	 * @param request the request
	 * @return the acquisitions
	 */
	public List<Acquisition> bindAll(LimitDefinition definition, RateLimitRequest request) {
		return definition.acquisitions(identity(definition, request), plan(definition, request));
	}

	/**
	 * The identity of a request for a limit.
	 * @param definition the limit
	 * @param request the request
	 * @return the identity
	 */
	public String identity(LimitDefinition definition, RateLimitRequest request) {
		return identity(definition.limit().name(), definition.key(), request);
	}

	/**
	 * The identity of a request for a limit's key chain.
	 * @param limit the limit name
	 * @param keyChain the key sources in order
	 * @param request the request
	 * @return the identity
	 */
	public String identity(String limit, List<KeySource> keyChain, RateLimitRequest request) {
		return this.identities.resolve(limit, keyChain, request);
	}

	/** The plan of a request, asked for only when the limit has plans. */
	private String plan(LimitDefinition definition, RateLimitRequest request) {
		return definition.plans().isEmpty() ? null : this.plans.resolve(request.principal());
	}

}
