package io.github.ratelimit.internal.pipeline;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.function.BiConsumer;

import org.springframework.http.server.PathContainer;
import org.springframework.util.StringUtils;
import org.springframework.web.util.pattern.PathPattern;
import org.springframework.web.util.pattern.PathPatternParser;
import org.springframework.web.util.pattern.PatternParseException;

import io.github.ratelimit.KeySource;
import io.github.ratelimit.PlanResolver;
import io.github.ratelimit.RateLimitRequest;
import io.github.ratelimit.RateLimitUnavailableException;
import io.github.ratelimit.internal.core.LimitDefinition;
import io.github.ratelimit.internal.core.RateLimiter;
import io.github.ratelimit.internal.core.ReleaseWait;
import io.github.ratelimit.store.Acquisition;
import io.github.ratelimit.store.RateLimitDecision;
import io.github.ratelimit.store.RateLimitResult;

/**
 * Limits HTTP requests whatever web stack carries them: matches route limits against the
 * normalised path, binds limits to the identity and plan of a request, decides each stage
 * of a request all-or-nothing across stages (a rejection gives back what earlier stages
 * took) and renders the answer. Web stacks adapt their request type to
 * {@link RateLimitRequest}, keep one {@link RequestLimits} per request and write what the
 * {@link Verdict} says.
 */
public final class RequestRateLimiter {

	/** Paths reach the matcher decoded already: they are parsed without decoding them again. */
	private static final PathContainer.Options DECODED_PATH = PathContainer.Options.create('/', false);

	private final RateLimiter limiter;

	private final RequestIdentityResolver identities;

	private final RateLimitResponses responses;

	private final List<RouteLimit> routes;

	/** Each route alone in a list, the answer of a request only it matches: most requests. */
	private final List<List<RouteLimit>> alone;

	/** Each route's pattern up to its first variable or wildcard: a path without it cannot match. */
	private final String[] literalPrefixes;

	/** Whether each route's pattern is all literal text, matched by comparing the path with it. */
	private final boolean[] literal;

	private final PlanResolver plans;

	/**
	 * Creates a request limiter.
	 * @param limiter decides
	 * @param identities finds identities
	 * @param responses renders headers and problem responses
	 * @param routes the configured route limits
	 * @param plans finds the plan of a request, for limits whose policy has plans
	 */
	public RequestRateLimiter(RateLimiter limiter, RequestIdentityResolver identities, RateLimitResponses responses,
			List<RouteLimit> routes, PlanResolver plans) {
		this.limiter = limiter;
		this.identities = identities;
		this.responses = responses;
		this.routes = List.copyOf(routes);
		this.alone = this.routes.stream().map(List::of).toList();
		this.literalPrefixes = new String[this.routes.size()];
		this.literal = new boolean[this.routes.size()];
		for (int i = 0; i < this.routes.size(); i++) {
			PathPattern pattern = this.routes.get(i).pattern();
			String text = pattern.getPatternString();
			// a pattern parsed otherwise (ignoring case, another separator) is left to its matcher
			boolean shortcut = isDefaultParsed(pattern);
			this.literalPrefixes[i] = shortcut ? literalPrefix(text) : "";
			this.literal[i] = shortcut && this.literalPrefixes[i].length() == text.length();
		}
		this.plans = plans;
	}

	/** Whether Spring's default parser (case-sensitive, {@code /}) gives the same pattern. */
	private static boolean isDefaultParsed(PathPattern pattern) {
		try {
			return pattern.equals(PathPatternParser.defaultInstance.parse(pattern.getPatternString()));
		}
		catch (PatternParseException ex) {
			return false;
		}
	}

	/**
	 * The text every path a pattern matches begins with: the whole pattern when it has no
	 * variable or wildcard ({@code {}, {@code *}, {@code ?}; a percent sign too, leaving
	 * escaped text to the pattern), else the segments before the one holding the first,
	 * without their last separator, which {@code /**} and <code>/{*rest}</code> may
	 * match without. Literal segments are compared exactly, case included.
	 */
	static String literalPrefix(String pattern) {
		for (int i = 0; i < pattern.length(); i++) {
			switch (pattern.charAt(i)) {
				case '{', '*', '?', '%' -> {
					return pattern.substring(0, Math.max(0, pattern.lastIndexOf('/', i)));
				}
				default -> {
				}
			}
		}
		return pattern;
	}

	/**
	 * Whether any route limit is configured.
	 * @return whether there are route limits
	 */
	public boolean hasRoutes() {
		return !this.routes.isEmpty();
	}

	/**
	 * The route limits matching a request. The path is stripped of dot segments and
	 * duplicate slashes first, so that {@code //api/./reports} cannot slip past a pattern
	 * for {@code /api/reports}. CORS preflight requests are not limited.
	 * <p>
	 * A path is parsed for the pattern matcher only when some route's literal prefix fits
	 * it and that route's pattern has variables or wildcards: a pattern of literal text
	 * alone matches exactly the path equal to it, so most requests, limited or not, are
	 * matched by comparing strings.
	 * @param request the request
	 * @return the matching route limits, in configuration order; not to be modified
	 */
	public List<RouteLimit> matchRoutes(RateLimitRequest request) {
		if (this.routes.isEmpty() || isPreflight(request)) {
			return List.of();
		}
		String path = StringUtils.cleanPath(request.path());
		if (!path.startsWith("/")) {
			path = "/" + path;
		}
		String method = request.method();
		PathContainer container = null;
		// indexed, and a list only once a second route matches: this runs on every request
		List<RouteLimit> matched = List.of();
		for (int i = 0; i < this.routes.size(); i++) {
			RouteLimit route = this.routes.get(i);
			if (!path.startsWith(this.literalPrefixes[i]) || !route.appliesTo(method)) {
				continue;
			}
			if (this.literal[i]) {
				if (path.length() != this.literalPrefixes[i].length()) {
					continue;
				}
			}
			else {
				if (container == null) {
					container = PathContainer.parsePath(path, DECODED_PATH);
				}
				if (!route.pattern().matches(container)) {
					continue;
				}
			}
			if (matched.isEmpty()) {
				matched = this.alone.get(i);
			}
			else {
				if (matched.size() == 1) {
					matched = new ArrayList<>(matched);
				}
				matched.add(this.routes.get(i));
			}
		}
		return matched;
	}

	/**
	 * The first stage of a request, before authentication: binds the matching route limits
	 * that need no principal and leaves those keyed on the principal for the handler.
	 * @param request the request
	 * @param state the request's state
	 * @return the acquisitions to decide now, empty when none
	 */
	public List<Acquisition> routeStage(RateLimitRequest request, RequestLimits state) {
		return routeStage(request, matchRoutes(request), state);
	}

	/**
	 * The first stage of a request as {@link #routeStage(RateLimitRequest, RequestLimits)},
	 * for route limits matched already: a web stack creates a request's state only once
	 * some route matches it.
	 * @param request the request
	 * @param matched the route limits it matches ({@link #matchRoutes})
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
	 * Decides one stage of a request on the calling thread. Admitted: records it. Rejected:
	 * gives back what earlier stages consumed and renders the {@code 429}, or the
	 * {@code 503} of fail-closed limits whose store is down.
	 * @param acquisitions the acquisitions of this stage
	 * @param state the request's state
	 * @return the verdict
	 */
	public Verdict decide(List<Acquisition> acquisitions, RequestLimits state) {
		RateLimitResult result;
		try {
			result = this.limiter.acquire(acquisitions);
		}
		catch (RateLimitUnavailableException ex) {
			return new Verdict(unavailable(state, ex), 0);
		}
		return verdict(acquisitions, result, state);
	}

	/**
	 * Decides one stage of a request without holding the calling thread, for event
	 * loops; otherwise as {@link #decide}. With a wait, token and leaky buckets reserve a
	 * slot up to {@code maxWaitMicros} ahead (the verdict's delay), and a stage the
	 * window algorithms reject is tried again after its retry-after while that stays
	 * within the wait, on a timer rather than a waiting thread.
	 * @param acquisitions the acquisitions of this stage
	 * @param state the request's state
	 * @param maxWaitMicros longest wait for a permit; 0 never waits
	 * @return the verdict
	 */
	public CompletionStage<Verdict> decideAsync(List<Acquisition> acquisitions, RequestLimits state,
			long maxWaitMicros) {
		// the clock matters only to a stage that may wait
		long deadline = (maxWaitMicros > 0) ? System.nanoTime() + TimeUnit.MICROSECONDS.toNanos(maxWaitMicros) : 0;
		return attempt(acquisitions, state, maxWaitMicros, deadline);
	}

	private CompletionStage<Verdict> attempt(List<Acquisition> acquisitions, RequestLimits state,
			long maxWaitMicros, long deadline) {
		long left = (maxWaitMicros > 0) ? Math.max(0, TimeUnit.NANOSECONDS.toMicros(deadline - System.nanoTime())) : 0;
		// watched before deciding, so that a release right after the rejection is not missed
		ReleaseWait release = (maxWaitMicros > 0) ? this.limiter.watchReleases(acquisitions) : null;
		CompletableFuture<RateLimitResult> decided = this.limiter.acquireAsync(acquisitions, left)
			.toCompletableFuture();
		if (release == null && decided.isDone() && !decided.isCompletedExceptionally()) {
			// decided on the calling thread (the in-memory store): answered at once unless a
			// rejection may be tried again within the wait
			RateLimitResult result = decided.join();
			if (maxWaitMicros == 0 || result.allowed()) {
				return CompletableFuture.completedFuture(verdict(acquisitions, result, state, true));
			}
		}
		return decided.handle((result, failure) -> {
			long retryAfter = (failure == null) ? retryAfterMicros(result) : 0;
			boolean retrying = failure == null && !result.allowed() && retryAfter > 0 && retryAfter <= left
					&& !state.abandoned();
			if (release != null && !retrying) {
				release.close();
			}
			if (failure != null) {
				Throwable cause = (failure instanceof CompletionException && failure.getCause() != null)
						? failure.getCause() : failure;
				if (cause instanceof RateLimitUnavailableException unavailable) {
					return CompletableFuture.completedFuture(new Verdict(unavailableAsync(state, unavailable), 0));
				}
				return CompletableFuture.<Verdict>failedFuture(cause);
			}
			if (retrying) {
				// rejected stages consume nothing: try again once the quota is back
				Executor timer = CompletableFuture.delayedExecutor(retryAfter, TimeUnit.MICROSECONDS);
				CompletableFuture<Object> retry = CompletableFuture.supplyAsync(() -> null, timer);
				if (release == null) {
					return retry.thenCompose((ignored) -> attempt(acquisitions, state, maxWaitMicros, deadline));
				}
				// a concurrency limit's waiter tries again as soon as a call gives its permit back
				return CompletableFuture.anyOf(retry, release.released()).thenComposeAsync((ignored) -> {
					release.close();
					return attempt(acquisitions, state, maxWaitMicros, deadline);
				});
			}
			return CompletableFuture.completedFuture(verdict(acquisitions, result, state, true));
		}).thenCompose((next) -> next);
	}

	private static long retryAfterMicros(RateLimitResult result) {
		long retryAfter = 0;
		for (RateLimitDecision decision : result.decisions()) {
			if (decision.rejects()) {
				retryAfter = Math.max(retryAfter, decision.retryAfterMicros());
			}
		}
		return retryAfter;
	}

	/**
	 * What a decided stage comes to: records it, and on rejection gives back what earlier
	 * stages consumed and renders the {@code 429}.
	 * @param acquisitions the acquisitions of the stage
	 * @param result their decisions
	 * @param state the request's state
	 * @return the verdict
	 */
	public Verdict verdict(List<Acquisition> acquisitions, RateLimitResult result, RequestLimits state) {
		return verdict(acquisitions, result, state, false);
	}

	/**
	 * Carries out a decision; refunds {@code async} never wait for the store, since the
	 * thread may be an event loop (the reply may complete before a continuation is
	 * attached, which then runs on the thread that asked).
	 */
	private Verdict verdict(List<Acquisition> acquisitions, RateLimitResult result, RequestLimits state,
			boolean async) {
		state.record(acquisitions, result);
		if (async && result.allowed() && state.abandoned()) {
			// the client went away while the store decided: this stage never begins, so what
			// it was granted goes back; what earlier stages began with stays taken
			state.abandon(this.limiter);
			return new Verdict(this.responses.rejection(state.decisions()), 0);
		}
		if (!result.allowed()) {
			if (async) {
				state.refundAllAsync(this.limiter);
			}
			else {
				state.refundAll(this.limiter);
			}
			return new Verdict(this.responses.rejection(state.decisions()), 0);
		}
		return (result.delayMicros() > 0) ? new Verdict(null, result.delayMicros()) : Verdict.PROCEED;
	}

	/**
	 * Handles a request whose client went away (a cancelled exchange), without waiting for
	 * the store: gives back only what a stage was granted that never began, including what
	 * a decision still under way grants later, and stops a stage waiting for a permit.
	 * Stages that began keep what they took (see {@link RequestLimits#abandon}).
	 * @param state the request's state
	 */
	public void abandon(RequestLimits state) {
		state.abandon(this.limiter);
	}

	/**
	 * Records an admitted stage decided elsewhere (by the method interceptor of a handler).
	 * @param acquisitions what was acquired
	 * @param result the decisions
	 * @param state the request's state
	 */
	public void allowed(List<Acquisition> acquisitions, RateLimitResult result, RequestLimits state) {
		state.record(acquisitions, result);
	}

	/**
	 * Records a rejected stage decided elsewhere and, when asked, gives back what earlier
	 * stages consumed.
	 * @param result the decisions
	 * @param state the request's state
	 * @param refundEarlierStages whether the earlier stages are given back
	 */
	public void rejected(RateLimitResult result, RequestLimits state, boolean refundEarlierStages) {
		state.record(List.of(), result);
		if (refundEarlierStages) {
			state.refundAll(this.limiter);
		}
	}

	/**
	 * The {@code 429} for a request, with every decision made for it.
	 * @param state the request's state, or {@code null} when no stage recorded anything
	 * @param decisions decisions of the rejecting stage, if not recorded yet
	 * @return the response to write
	 */
	public ProblemResponse rejection(RequestLimits state, List<RateLimitDecision> decisions) {
		List<RateLimitDecision> all = new ArrayList<>();
		if (state != null) {
			all.addAll(state.decisions());
		}
		for (RateLimitDecision decision : decisions) {
			if (!all.contains(decision)) {
				all.add(decision);
			}
		}
		return this.responses.rejection(all);
	}

	/**
	 * The {@code 503} for fail-closed limits whose store is down, giving back what earlier
	 * stages consumed.
	 * @param state the request's state, or {@code null} when no stage recorded anything
	 * @param unavailable what could not be decided
	 * @return the response to write
	 */
	public ProblemResponse unavailable(RequestLimits state, RateLimitUnavailableException unavailable) {
		if (state != null) {
			state.refundAll(this.limiter);
		}
		return this.responses.unavailable(unavailable);
	}

	/**
	 * The {@code 503} as {@link #unavailable}, giving back without waiting for the store:
	 * for event loops.
	 * @param state the request's state, or {@code null} when no stage recorded anything
	 * @param unavailable what could not be decided
	 * @return the response to write
	 */
	public ProblemResponse unavailableAsync(RequestLimits state, RateLimitUnavailableException unavailable) {
		if (state != null) {
			state.refundAllAsync(this.limiter);
		}
		return this.responses.unavailable(unavailable);
	}

	/**
	 * Gives back what limits that do not count the final status of a request consumed
	 * for it (see {@link RequestLimits#settle}). Called once the response status is final;
	 * refunds on the calling thread.
	 * @param state the request's state, or {@code null} when nothing limited it
	 * @param status the final response status
	 */
	public void settle(RequestLimits state, int status) {
		if (state != null) {
			state.settle(status, this.limiter);
		}
	}

	/**
	 * Gives back as {@link #settle} without blocking: for event loops.
	 * @param state the request's state, or {@code null} when nothing limited it
	 * @param status the final response status
	 * @return completes when the store has answered every refund (a failed refund is
	 * dropped, never an error)
	 */
	public CompletionStage<Void> settleAsync(RequestLimits state, int status) {
		return (state != null) ? state.settleAsync(status, this.limiter) : CompletableFuture.completedFuture(null);
	}

	/**
	 * Gives back as {@link #settleAsync} only what limits counting some statuses took,
	 * leaving the permits concurrency limits hold until the call is over.
	 * @param state the request's state, or {@code null} when nothing limited it
	 * @param status the final response status
	 * @return completes when the store has answered every refund
	 */
	public CompletionStage<Void> settleCountedAsync(RequestLimits state, int status) {
		return (state != null) ? state.settleCountedAsync(status, this.limiter)
				: CompletableFuture.completedFuture(null);
	}

	/**
	 * Gives back the permits concurrency limits hold for a request whose call is over.
	 * @param state the request's state, or {@code null} when nothing limited it
	 * @return completes when the store has answered every refund
	 */
	public CompletionStage<Void> releaseHeldAsync(RequestLimits state) {
		return (state != null) ? state.releaseHeldAsync(this.limiter) : CompletableFuture.completedFuture(null);
	}

	/**
	 * The rate limit headers for every decision made for a request so far.
	 * @param state the request's state
	 * @param headers receives each header
	 */
	public void headers(RequestLimits state, BiConsumer<String, String> headers) {
		this.responses.headers(state.decisions(), headers);
	}

	/** A CORS preflight: OPTIONS with an Origin and Access-Control-Request-Method. */
	private static boolean isPreflight(RateLimitRequest request) {
		return "OPTIONS".equals(request.method()) && request.header("Origin") != null
				&& request.header("Access-Control-Request-Method") != null;
	}

}
