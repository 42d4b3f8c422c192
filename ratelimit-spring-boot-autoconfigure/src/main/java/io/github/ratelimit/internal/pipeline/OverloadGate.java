package io.github.ratelimit.internal.pipeline;

import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.http.server.PathContainer;
import org.springframework.util.StringUtils;
import org.springframework.web.util.DisconnectedClientHelper;
import org.springframework.web.util.pattern.PathPattern;

import io.github.ratelimit.RateLimitRequest;
import io.github.ratelimit.RequestPriority;
import io.github.ratelimit.RequestPriorityResolver;
import io.github.ratelimit.internal.core.ThrottledLog;
import io.github.ratelimit.internal.overload.OverloadLimiter;
import io.github.ratelimit.internal.overload.OverloadLimiter.Outcome;
import io.github.ratelimit.internal.overload.OverloadLimiter.Permit;

/**
 * What the web front ends ask of overload protection, whatever their stack: whether the
 * limit covers a request and at which priority, a permit for it, the answer to a request
 * turned away, and how a finished request's status feeds the limit.
 * <p>
 * A request's priority comes from the first source that has one: the
 * {@link RequestPriorityResolver} beans in order, the configured priority header, the
 * configured priority routes, the handler's {@code @OverloadPriority} (read from the
 * handler mappings at startup, so that the filters never look a handler up), then the
 * default. The actuator's endpoints and the excluded paths are never counted nor turned
 * away.
 */
public final class OverloadGate {

	private static final Log logger = LogFactory.getLog(OverloadGate.class);

	/** Paths reach the gate decoded already: they are parsed without decoding them again. */
	private static final PathContainer.Options DECODED_PATH = PathContainer.Options.create('/', false);

	private final OverloadLimiter limiter;

	private final List<RequestPriorityResolver> resolvers;

	private final @Nullable String priorityHeader;

	private final List<PriorityRoute> routes;

	private final List<PathPattern> paths;

	private final List<PathPattern> excludePaths;

	private final String managementPath;

	private final RequestPriority defaultPriority;

	private final OverloadResponses responses;

	/** What shadow mode would have shed, said at most once a minute: the meters count every one. */
	private final ThrottledLog shadowLog = new ThrottledLog(TimeUnit.MINUTES.toNanos(1), System::nanoTime);

	/** The priorities handlers declare, known once the handler mappings are. */
	private volatile List<PriorityRoute> handlerRoutes = List.of();

	private OverloadGate(Builder builder) {
		this.limiter = builder.limiter;
		this.resolvers = List.copyOf(builder.resolvers);
		this.priorityHeader = StringUtils.hasText(builder.priorityHeader) ? builder.priorityHeader.trim() : null;
		this.routes = PriorityRoute.mostSpecificFirst(builder.routes);
		this.paths = List.copyOf(builder.paths);
		this.excludePaths = List.copyOf(builder.excludePaths);
		String management = normalise(builder.managementPath);
		this.managementPath = (management.length() > 1 && management.endsWith("/"))
				? management.substring(0, management.length() - 1) : management;
		this.defaultPriority = builder.defaultPriority;
		this.responses = new OverloadResponses(builder.retryAfter);
	}

	/**
	 * Starts a gate.
	 * @param limiter the limit on calls in flight
	 * @return a builder
	 */
	public static Builder builder(OverloadLimiter limiter) {
		return new Builder(limiter);
	}

	/**
	 * Sets the priorities the application's handlers declare with {@code @OverloadPriority}.
	 * @param routes the handlers' patterns, methods and priorities
	 */
	public void handlerPriorities(List<PriorityRoute> routes) {
		// without one annotated handler there is nothing to look up per request
		boolean declared = routes.stream().anyMatch((route) -> route.priority() != null);
		this.handlerRoutes = declared ? PriorityRoute.mostSpecificFirst(routes) : List.of();
	}

	/**
	 * The priority of a request the limit covers.
	 * @param request the request
	 * @return the priority, or {@code null} when the limit does not cover the request (an
	 * actuator endpoint, an excluded path, a path outside {@code paths})
	 */
	public @Nullable RequestPriority priority(RateLimitRequest request) {
		return priority(request, false);
	}

	/**
	 * The priority of a request the limit covers.
	 * @param request the request
	 * @param encodedSeparators whether the raw path encodes a slash, a backslash or a dot,
	 * which a router may read as one segment where the decoded path shows several
	 * @return the priority, or {@code null} when the limit does not cover the request (an
	 * actuator endpoint, an excluded path, a path outside {@code paths})
	 */
	public @Nullable RequestPriority priority(RateLimitRequest request, boolean encodedSeparators) {
		String raw = request.path();
		String path = normalise(raw);
		// a path that dot segments, repeated or encoded slashes make ambiguous may be routed
		// to another handler than the one its cleaned form names: it is always covered, and
		// ranks by nothing its path says, so that no spelling dodges the limit or buys a priority
		boolean plain = !encodedSeparators && path.equals(raw);
		if (plain && isManagement(path)) {
			return null;
		}
		PathContainer container = null;
		if (plain && (!this.paths.isEmpty() || !this.excludePaths.isEmpty())) {
			container = PathContainer.parsePath(path, DECODED_PATH);
			if (!this.paths.isEmpty() && !anyMatches(this.paths, container)) {
				return null;
			}
			if (anyMatches(this.excludePaths, container)) {
				return null;
			}
		}
		for (RequestPriorityResolver resolver : this.resolvers) {
			RequestPriority resolved = resolver.resolve(request);
			if (resolved != null) {
				return resolved;
			}
		}
		if (this.priorityHeader != null) {
			RequestPriority fromHeader = parse(request.header(this.priorityHeader));
			if (fromHeader != null) {
				return fromHeader;
			}
		}
		List<PriorityRoute> handlers = this.handlerRoutes;
		if (!plain || (this.routes.isEmpty() && handlers.isEmpty())) {
			return this.defaultPriority;
		}
		if (container == null) {
			container = PathContainer.parsePath(path, DECODED_PATH);
		}
		String method = request.method();
		PriorityRoute routed = firstMatch(this.routes, method, container);
		if (routed != null && routed.priority() != null) {
			return routed.priority();
		}
		// the handler that serves the path, annotated or not: the most specific pattern first
		PriorityRoute handler = firstMatch(handlers, method, container);
		return (handler != null && handler.priority() != null) ? handler.priority() : this.defaultPriority;
	}

	/**
	 * The path without dot segments and duplicate slashes, so that {@code //actuator/./health}
	 * is recognised as what the application serves.
	 */
	private static String normalise(String raw) {
		String path = StringUtils.cleanPath(raw);
		if (path.contains("//")) {
			path = path.replaceAll("/{2,}", "/");
		}
		return path.startsWith("/") ? path : "/" + path;
	}

	/** The actuator's base path and everything below it; with a base path of {@code /}, nothing is. */
	private boolean isManagement(String path) {
		if ("/".equals(this.managementPath)) {
			return false;
		}
		return path.startsWith(this.managementPath) && (path.length() == this.managementPath.length()
				|| path.charAt(this.managementPath.length()) == '/');
	}

	private static boolean anyMatches(List<PathPattern> patterns, PathContainer path) {
		for (PathPattern pattern : patterns) {
			if (pattern.matches(path)) {
				return true;
			}
		}
		return false;
	}

	private static @Nullable PriorityRoute firstMatch(List<PriorityRoute> routes, String method,
			PathContainer path) {
		for (PriorityRoute route : routes) {
			if (route.matches(method, path)) {
				return route;
			}
		}
		return null;
	}

	/** A header value naming a priority, in any case; anything else names none. */
	private static @Nullable RequestPriority parse(@Nullable String value) {
		if (value == null) {
			return null;
		}
		return switch (value.trim().toLowerCase(Locale.ROOT)) {
			case "critical" -> RequestPriority.CRITICAL;
			case "normal" -> RequestPriority.NORMAL;
			case "sheddable" -> RequestPriority.SHEDDABLE;
			default -> null;
		};
	}

	/**
	 * Admits a request, or turns it away.
	 * @param priority the request's priority
	 * @return the permit to release when the request ends, or {@link Permit#SHED}
	 */
	public Permit tryAcquire(RequestPriority priority) {
		return logShadow(priority, this.limiter.tryAcquire(priority));
	}

	/**
	 * Admits a request, or turns it away; a critical request that finds the limit full
	 * waits on this thread for a place, at most the critical wait.
	 * @param priority the request's priority
	 * @return the permit to release when the request ends, or {@link Permit#SHED}
	 */
	public Permit acquire(RequestPriority priority) {
		return logShadow(priority, this.limiter.acquire(priority, this.limiter.criticalWaitNanos()));
	}

	/**
	 * Admits a request, or turns it away, without blocking; a critical request that finds
	 * the limit full waits for a place, at most the critical wait, and the future completes
	 * on the thread that frees the place or on the limiter's timer. Cancelling the future
	 * ends the wait.
	 * @param priority the request's priority
	 * @return the permit to release when the request ends, or {@link Permit#SHED}, now or
	 * later
	 */
	public CompletableFuture<Permit> acquireAsync(RequestPriority priority) {
		CompletableFuture<Permit> permit = this.limiter.acquireAsync(priority);
		if (permit.isDone()) {
			logShadow(priority, permit.join());
		}
		return permit;
	}

	private Permit logShadow(RequestPriority priority, Permit permit) {
		if (permit.overLimit() && !permit.shed()) {
			this.shadowLog.log("Overload protection (shadow mode) admitted a " + priority.name().toLowerCase(Locale.ROOT)
					+ " request it would have turned away: " + this.limiter.inFlight() + " calls in flight, limit "
					+ this.limiter.limit(), logger::info);
		}
		return permit;
	}

	/**
	 * The answer to a request turned away.
	 * @param priority the request's priority
	 * @return the {@code 503} to write
	 */
	public ProblemResponse shed(RequestPriority priority) {
		return this.responses.shed(priority);
	}

	/**
	 * How a request answered with a status ended, as far as the limit is concerned: a 5xx
	 * signals overload, a 4xx (our own 429s included) says nothing about the service's
	 * capacity, anything else is a latency sample.
	 * @param status the final status
	 * @return the outcome
	 */
	public static Outcome outcome(int status) {
		if (status >= 500) {
			return Outcome.DROPPED;
		}
		return (status >= 400) ? Outcome.IGNORED : Outcome.SUCCEEDED;
	}

	/**
	 * What a call that ended with a response teaches the limit, given what it streamed. A
	 * stream (server-sent events, newline-delimited JSON) lasts as long as its client
	 * listens: its length says nothing about how loaded the service is, so it frees its
	 * place without a sample unless it failed.
	 * @param status the final status
	 * @param contentType the response's content type, or {@code null}
	 * @return the outcome
	 */
	public static Outcome outcome(int status, @Nullable String contentType) {
		Outcome outcome = outcome(status);
		return (outcome == Outcome.SUCCEEDED && isStream(contentType)) ? Outcome.IGNORED : outcome;
	}

	/**
	 * What a call that failed teaches the limit: a client that went away says nothing about
	 * the service; anything else is a sign of overload.
	 * @param failure what ended the call
	 * @return the outcome
	 */
	public static Outcome outcome(Throwable failure) {
		return DisconnectedClientHelper.isClientDisconnectedException(failure) ? Outcome.IGNORED : Outcome.DROPPED;
	}

	private static boolean isStream(@Nullable String contentType) {
		if (contentType == null) {
			return false;
		}
		String type = contentType.toLowerCase(Locale.ROOT);
		return type.startsWith("text/event-stream") || type.startsWith("application/x-ndjson")
				|| type.startsWith("application/stream+json");
	}

	/**
	 * The limit the gate admits under.
	 * @return the limiter
	 */
	public OverloadLimiter limiter() {
		return this.limiter;
	}

	/** Settings of a gate. */
	public static final class Builder {

		private final OverloadLimiter limiter;

		private List<RequestPriorityResolver> resolvers = List.of();

		private @Nullable String priorityHeader;

		private List<PriorityRoute> routes = List.of();

		private List<PathPattern> paths = List.of();

		private List<PathPattern> excludePaths = List.of();

		private String managementPath = "/actuator";

		private RequestPriority defaultPriority = RequestPriority.NORMAL;

		private Duration retryAfter = Duration.ofSeconds(1);

		private Builder(OverloadLimiter limiter) {
			this.limiter = limiter;
		}

		/**
		 * The resolvers asked first, in order.
		 * @param resolvers the resolvers
		 * @return this builder
		 */
		public Builder resolvers(List<RequestPriorityResolver> resolvers) {
			this.resolvers = resolvers;
			return this;
		}

		/**
		 * The header whose value names a request's priority.
		 * @param header the header name, or {@code null} or blank for none
		 * @return this builder
		 */
		public Builder priorityHeader(@Nullable String header) {
			this.priorityHeader = header;
			return this;
		}

		/**
		 * The configured priority routes.
		 * @param routes the routes
		 * @return this builder
		 */
		public Builder routes(List<PriorityRoute> routes) {
			this.routes = routes;
			return this;
		}

		/**
		 * The paths the limit covers.
		 * @param paths the patterns, empty for every path
		 * @return this builder
		 */
		public Builder paths(List<PathPattern> paths) {
			this.paths = paths;
			return this;
		}

		/**
		 * The paths the limit never covers.
		 * @param excludePaths the patterns
		 * @return this builder
		 */
		public Builder excludePaths(List<PathPattern> excludePaths) {
			this.excludePaths = excludePaths;
			return this;
		}

		/**
		 * The actuator's base path, never covered.
		 * @param managementPath the path, such as {@code /actuator}
		 * @return this builder
		 */
		public Builder managementPath(String managementPath) {
			this.managementPath = managementPath;
			return this;
		}

		/**
		 * The priority of a request no source ranks.
		 * @param priority the priority
		 * @return this builder
		 */
		public Builder defaultPriority(RequestPriority priority) {
			this.defaultPriority = priority;
			return this;
		}

		/**
		 * How long a client turned away is told to wait.
		 * @param retryAfter the delay
		 * @return this builder
		 */
		public Builder retryAfter(Duration retryAfter) {
			this.retryAfter = retryAfter;
			return this;
		}

		/**
		 * Builds the gate.
		 * @return the gate
		 */
		public OverloadGate build() {
			return new OverloadGate(this);
		}

	}

}
