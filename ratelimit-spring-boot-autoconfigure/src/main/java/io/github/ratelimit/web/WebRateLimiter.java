package io.github.ratelimit.web;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;

import org.springframework.http.server.PathContainer;
import org.springframework.util.StringUtils;
import org.springframework.web.cors.CorsUtils;
import org.springframework.web.util.UrlPathHelper;

import io.github.ratelimit.PlanResolver;
import io.github.ratelimit.RateLimitUnavailableException;
import io.github.ratelimit.aop.PrincipalNames;
import io.github.ratelimit.core.Acquisition;
import io.github.ratelimit.core.LimitDefinition;
import io.github.ratelimit.core.RateLimitResult;
import io.github.ratelimit.core.RateLimiter;

/**
 * Limits servlet requests: matches route limits, binds limits to the identity of a
 * request, and decides a stage of a request, answering {@code 429} on rejection.
 */
public final class WebRateLimiter {

	private static final UrlPathHelper PATHS = UrlPathHelper.defaultInstance;

	private final RateLimiter limiter;

	private final RequestIdentityResolver identities;

	private final RateLimitResponseWriter writer;

	private final List<RouteLimit> routes;

	private final PlanResolver plans;

	/**
	 * Creates a web limiter.
	 * @param limiter decides
	 * @param identities finds identities
	 * @param writer writes headers and rejections
	 * @param routes the configured route limits
	 */
	public WebRateLimiter(RateLimiter limiter, RequestIdentityResolver identities, RateLimitResponseWriter writer,
			List<RouteLimit> routes) {
		this(limiter, identities, writer, routes, (principal) -> null);
	}

	/**
	 * Creates a web limiter.
	 * @param limiter decides
	 * @param identities finds identities
	 * @param writer writes headers and rejections
	 * @param routes the configured route limits
	 * @param plans finds the plan of a request, for limits whose policy has plans
	 */
	public WebRateLimiter(RateLimiter limiter, RequestIdentityResolver identities, RateLimitResponseWriter writer,
			List<RouteLimit> routes, PlanResolver plans) {
		this.limiter = limiter;
		this.identities = identities;
		this.writer = writer;
		this.routes = List.copyOf(routes);
		this.plans = plans;
	}

	/**
	 * The route limits matching a request. The path is decoded, stripped of path
	 * parameters and normalised first, so that {@code //api/./reports;x} cannot slip past
	 * a pattern for {@code /api/reports}. CORS preflight requests are not limited.
	 * @param request the request
	 * @return the matching route limits
	 */
	public List<RouteLimit> matchRoutes(HttpServletRequest request) {
		if (this.routes.isEmpty() || CorsUtils.isPreFlightRequest(request)) {
			return List.of();
		}
		String path = StringUtils.cleanPath(PATHS.getPathWithinApplication(request));
		if (!path.startsWith("/")) {
			path = "/" + path;
		}
		// the path is decoded already: parse it without decoding it a second time
		PathContainer container = PathContainer.parsePath(path, PathContainer.Options.create('/', false));
		String method = request.getMethod();
		List<RouteLimit> matched = new ArrayList<>(2);
		for (RouteLimit route : this.routes) {
			if (route.matches(method, container)) {
				matched.add(route);
			}
		}
		return matched;
	}

	/**
	 * Binds a limit to the identity of a request.
	 * @param definition the limit
	 * @param request the request
	 * @return the acquisition
	 */
	public Acquisition bind(LimitDefinition definition, HttpServletRequest request) {
		return new Acquisition(definition.limitFor(plan(definition, request)),
				this.identities.resolve(definition.key(), request), definition.cost());
	}

	/**
	 * Binds a limit, and its candidate if it has one, to the identity of a request.
	 * @param definition the limit
	 * @param request the request
	 * @return the acquisitions
	 */
	public List<Acquisition> bindAll(LimitDefinition definition, HttpServletRequest request) {
		return definition.acquisitions(this.identities.resolve(definition.key(), request),
				plan(definition, request));
	}

	/** The plan of a request, asked for only when the limit has plans. */
	private String plan(LimitDefinition definition, HttpServletRequest request) {
		return definition.plans().isEmpty() ? null
				: this.plans.resolve(PrincipalNames.currentPrincipal(request.getUserPrincipal()));
	}

	/**
	 * The identity of a request for a key chain.
	 * @param definition the limit whose key chain to follow
	 * @param request the request
	 * @return the identity
	 */
	public String identity(LimitDefinition definition, HttpServletRequest request) {
		return this.identities.resolve(definition.key(), request);
	}

	/**
	 * Binds route limits that waited for the principal.
	 * @param request the request
	 * @return their acquisitions, empty when none waited or they were taken already
	 */
	public List<Acquisition> takeDeferred(HttpServletRequest request) {
		RequestLimitState state = RequestLimitState.get(request);
		if (state == null || !state.hasDeferred()) {
			return List.of();
		}
		return state.takeDeferred().stream().flatMap((route) -> bindAll(route.definition(), request).stream()).toList();
	}

	/**
	 * Decides one stage of a request. Admitted: records it, writes the headers and holds
	 * the request for a leaky bucket's drain slot. Rejected: gives back what earlier
	 * stages consumed and answers {@code 429}.
	 * @param acquisitions the acquisitions of this stage
	 * @param request the request
	 * @param response the response
	 * @return whether the request may proceed
	 * @throws IOException when the rejection cannot be written
	 */
	public boolean decide(List<Acquisition> acquisitions, HttpServletRequest request, HttpServletResponse response)
			throws IOException {
		RateLimitResult result;
		try {
			result = this.limiter.acquire(acquisitions);
		}
		catch (RateLimitUnavailableException ex) {
			RequestLimitState.getOrCreate(request).refundAll(this.limiter);
			this.writer.writeUnavailable(response, ex);
			return false;
		}
		RequestLimitState state = RequestLimitState.getOrCreate(request);
		if (!result.allowed()) {
			state.record(acquisitions, result);
			state.refundAll(this.limiter);
			this.writer.writeRejection(response, state.decisions());
			return false;
		}
		allowed(acquisitions, result, request, response);
		result.awaitDelay();
		return true;
	}

	/**
	 * Records an admitted stage decided elsewhere and writes the headers.
	 * @param acquisitions what was acquired
	 * @param result the decisions
	 * @param request the request
	 * @param response the response
	 */
	public void allowed(List<Acquisition> acquisitions, RateLimitResult result, HttpServletRequest request,
			HttpServletResponse response) {
		RequestLimitState state = RequestLimitState.getOrCreate(request);
		state.record(acquisitions, result);
		if (response != null) {
			this.writer.writeHeaders(response, state.decisions());
		}
	}

	/**
	 * Records a rejected stage decided elsewhere and, when asked, gives back what earlier
	 * stages consumed.
	 * @param result the decisions
	 * @param request the request
	 * @param refundEarlierStages whether the earlier stages are given back
	 */
	public void rejected(RateLimitResult result, HttpServletRequest request, boolean refundEarlierStages) {
		RequestLimitState state = RequestLimitState.getOrCreate(request);
		state.record(List.of(), result);
		if (refundEarlierStages) {
			state.refundAll(this.limiter);
		}
	}

	/**
	 * Answers {@code 429} for a request with every decision made for it.
	 * @param request the request
	 * @param response the response
	 * @param decisions decisions of the rejecting stage, if not recorded yet
	 * @throws IOException when the body cannot be written
	 */
	public void writeRejection(HttpServletRequest request, HttpServletResponse response,
			List<io.github.ratelimit.core.RateLimitDecision> decisions) throws IOException {
		RequestLimitState state = RequestLimitState.get(request);
		List<io.github.ratelimit.core.RateLimitDecision> all = new ArrayList<>();
		if (state != null) {
			all.addAll(state.decisions());
		}
		for (io.github.ratelimit.core.RateLimitDecision decision : decisions) {
			if (!all.contains(decision)) {
				all.add(decision);
			}
		}
		this.writer.writeRejection(response, all);
	}

	/**
	 * Answers {@code 503} for fail-closed limits whose store is down, giving back what
	 * earlier stages consumed.
	 * @param request the request
	 * @param response the response
	 * @param unavailable what could not be decided
	 * @throws IOException when the body cannot be written
	 */
	public void writeUnavailable(HttpServletRequest request, HttpServletResponse response,
			RateLimitUnavailableException unavailable) throws IOException {
		RequestLimitState state = RequestLimitState.get(request);
		if (state != null) {
			state.refundAll(this.limiter);
		}
		this.writer.writeUnavailable(response, unavailable);
	}

	/**
	 * Whether route limits wait for the handler of this request.
	 * @param request the request
	 * @return whether some are deferred
	 */
	public boolean hasDeferred(HttpServletRequest request) {
		RequestLimitState state = RequestLimitState.get(request);
		return state != null && state.hasDeferred();
	}

	/**
	 * Marks route limits as waiting for the authenticated principal.
	 * @param request the request
	 * @param routes the route limits
	 */
	public void defer(HttpServletRequest request, List<RouteLimit> routes) {
		RequestLimitState.getOrCreate(request).defer(routes);
	}

}
