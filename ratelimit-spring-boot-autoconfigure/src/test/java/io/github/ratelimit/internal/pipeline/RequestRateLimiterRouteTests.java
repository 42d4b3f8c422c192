package io.github.ratelimit.internal.pipeline;

import java.security.Principal;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;

import org.junit.jupiter.api.Test;

import org.springframework.http.server.PathContainer;
import org.springframework.util.StringUtils;
import org.springframework.web.util.pattern.PathPatternParser;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.KeySource;
import io.github.ratelimit.RateLimitRequest;
import io.github.ratelimit.internal.core.LimitDefinition;
import io.github.ratelimit.internal.core.RateLimiter;
import io.github.ratelimit.internal.memory.InMemoryRateLimitStore;
import io.github.ratelimit.store.Acquisition;
import io.github.ratelimit.store.RateLimit;
import io.github.ratelimit.store.contract.MutableClock;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Which route limits a request matches, and what its first stage decides now or leaves
 * for the handler: one route, several, none, keyed on the client or on the principal.
 */
class RequestRateLimiterRouteTests {

	private static final RouteLimit API = route("/api/**", KeySource.IP);

	private static final RouteLimit ORDERS = route("/api/orders", KeySource.PRINCIPAL);

	private static final RouteLimit ORDERS_BY_IP = route("/api/orders/**", KeySource.IP);

	private static final RouteLimit HEALTH = route("/health", KeySource.IP);

	private final RequestRateLimiter limiter = limiter(List.of(API, ORDERS, ORDERS_BY_IP, HEALTH));

	@Test
	void aRequestMatchesEveryRouteWhosePatternItFitsInConfigurationOrder() {
		assertThat(this.limiter.matchRoutes(get("/api/orders"))).containsExactly(API, ORDERS, ORDERS_BY_IP);
		assertThat(this.limiter.matchRoutes(get("/api/orders/7"))).containsExactly(API, ORDERS_BY_IP);
		assertThat(this.limiter.matchRoutes(get("/api/items"))).containsExactly(API);
		assertThat(this.limiter.matchRoutes(get("/health"))).containsExactly(HEALTH);
		assertThat(this.limiter.matchRoutes(get("/elsewhere"))).isEmpty();
		// matched after the path is cleaned of dot segments
		assertThat(this.limiter.matchRoutes(get("/static/../health"))).containsExactly(HEALTH);
	}

	@Test
	void matchingByLiteralPrefixAgreesWithThePatternMatcher() {
		List<String> patterns = List.of("/api/**", "/api/orders", "/api/orders/{id}", "/files/{*rest}", "/a?c",
				"/img/*.png", "/health", "/login/", "/v1/{tenant}/items", "/Case/Sensitive", "/", "/**", "/x%20y",
				"/api/{id:[0-9]+}", "/static/{*path}", "/docs/v{version}/index", "/**/leaf");
		List<RouteLimit> routes = new ArrayList<>();
		for (int i = 0; i < patterns.size(); i++) {
			// every other route for any method
			routes.add(route(patterns.get(i), KeySource.IP, (i % 2 == 0) ? Set.of("GET") : Set.of()));
		}
		RequestRateLimiter all = limiter(routes);
		List<String> paths = List.of("/", "", "/api", "/api/", "/api/orders", "/api/orders/", "/api/orders/7",
				"/api/ordersX", "/API/orders", "/files", "/files/", "/files/a/b", "/abc", "/a/c", "/ac", "/img/x.png",
				"/img/.png", "/img/x.jpg", "/health", "/health/", "/healthz", "/Health", "/login", "/login/",
				"/v1/acme/items", "/v1//items", "/v1/items", "/case/sensitive", "/Case/Sensitive", "/x%20y", "/x y",
				"/api/123", "/api/abc", "//api//orders", "/static/../health", "/api/./orders", "api/orders", "/a;b/c",
				"/health;jsessionid=1", "/docs/v2/index", "/docs/v/index", "/docs/2/index", "/deep/leaf",
				"/deep/a/b/leaf", "/static", "/static/", "/static/a.css");
		for (String method : List.of("GET", "HEAD", "POST")) {
			for (String path : paths) {
				Request request = new Request(method, path, List.of());
				String cleaned = StringUtils.cleanPath(path);
				PathContainer container = PathContainer.parsePath(cleaned.startsWith("/") ? cleaned : "/" + cleaned,
						PathContainer.Options.create('/', false));
				List<RouteLimit> expected = routes.stream().filter((route) -> route.matches(method, container)).toList();
				assertThat(all.matchRoutes(request)).as("%s %s", method, path).containsExactlyElementsOf(expected);
			}
		}
	}

	@Test
	void aPatternParsedIgnoringCaseIsLeftToItsMatcher() {
		PathPatternParser ignoringCase = new PathPatternParser();
		ignoringCase.setCaseSensitive(false);
		RateLimit limit = RateLimit.of("GET /Health", Algorithm.FIXED_WINDOW, 100, Duration.ofMinutes(1));
		RouteLimit health = new RouteLimit(ignoringCase.parse("/Health"), Set.of(),
				LimitDefinition.builder(limit).key(List.of(KeySource.IP)).build());
		RouteLimit api = new RouteLimit(ignoringCase.parse("/API/**"), Set.of(),
				LimitDefinition.builder(limit).key(List.of(KeySource.IP)).build());

		RequestRateLimiter limiter = limiter(List.of(health, api));

		assertThat(limiter.matchRoutes(get("/health"))).containsExactly(health);
		assertThat(limiter.matchRoutes(get("/api/items"))).containsExactly(api);
	}

	@Test
	void theLiteralPrefixEndsBeforeTheSegmentOfTheFirstVariableOrWildcard() {
		assertThat(RouteMatcher.literalPrefix("/api/orders")).isEqualTo("/api/orders");
		assertThat(RouteMatcher.literalPrefix("/api/orders/{id}")).isEqualTo("/api/orders");
		assertThat(RouteMatcher.literalPrefix("/api/**")).isEqualTo("/api");
		assertThat(RouteMatcher.literalPrefix("/img/*.png")).isEqualTo("/img");
		assertThat(RouteMatcher.literalPrefix("/a?c")).isEmpty();
		assertThat(RouteMatcher.literalPrefix("/x%20y")).isEmpty();
		assertThat(RouteMatcher.literalPrefix("/**")).isEmpty();
	}

	@Test
	void oneMatchingRouteKeyedOnTheClientIsDecidedNow() {
		RequestLimits state = new RequestLimits();

		List<Acquisition> now = this.limiter.routeStage(get("/health"), state);

		assertThat(now).extracting(Acquisition::limit).containsExactly(HEALTH.definition().limit());
		assertThat(now).extracting(Acquisition::identity).allMatch((identity) -> identity.contains("203.0.113.7"));
		assertThat(state.hasDeferred()).isFalse();
	}

	@Test
	void oneMatchingRouteKeyedOnThePrincipalWaitsForTheHandler() {
		RequestRateLimiter ordersOnly = limiter(List.of(HEALTH, ORDERS));
		RequestLimits state = new RequestLimits();

		assertThat(ordersOnly.routeStage(get("/api/orders"), state)).isEmpty();

		assertThat(state.hasDeferred()).isTrue();
		assertThat(state.takeDeferred()).containsExactly(ORDERS);
	}

	@Test
	void severalMatchingRoutesAreDecidedTogetherExceptThoseWaitingForThePrincipal() {
		RequestLimits state = new RequestLimits();

		List<Acquisition> now = this.limiter.routeStage(get("/api/orders"), state);

		assertThat(now).extracting(Acquisition::limit)
			.containsExactly(API.definition().limit(), ORDERS_BY_IP.definition().limit());
		assertThat(state.takeDeferred()).containsExactly(ORDERS);
	}

	@Test
	void aRequestNoRouteMatchesHasNothingToDecide() {
		RequestLimits state = new RequestLimits();

		assertThat(this.limiter.routeStage(get("/elsewhere"), state)).isEmpty();
		assertThat(state.hasDeferred()).isFalse();
		assertThat(this.limiter.routeStage(new Request("OPTIONS", "/health", List.of("GET")), state))
			.as("a CORS preflight")
			.isEmpty();
	}

	@Test
	void aRouteStageDecidedInPlaceAnswersAsTheStageOfAcquisitions() {
		for (HeaderStyle style : HeaderStyle.values()) {
			MutableClock clock = new MutableClock(MutableClock.DEFAULT_START_MICROS);
			RequestRateLimiter inPlace = limiter(List.of(HEALTH), new InMemoryRateLimitStore(clock, 1000), style);
			RequestRateLimiter listed = limiter(List.of(HEALTH), new InMemoryRateLimitStore(clock, 1000), style);
			for (int i = 0; i < 3; i++) {
				RequestLimits kept = new RequestLimits();
				Verdict verdict = inPlace.decideRouteStage(get("/health"), inPlace.matchRoutes(get("/health")), kept);
				RequestLimits decided = new RequestLimits();
				Verdict expected = listed.decide(listed.routeStage(get("/health"), decided), decided);
				clock.advance(Duration.ofSeconds(7));

				assertThat(verdict).isEqualTo(expected);
				assertThat(kept.keptInPlace()).isTrue();
				Map<String, String> headers = new LinkedHashMap<>();
				inPlace.writeHeaders(kept, (name, value) -> headers.put(name, value.toString()));
				Map<String, String> expectedHeaders = new LinkedHashMap<>();
				listed.headers(decided, expectedHeaders::put);
				assertThat(headers).as(style.name()).containsExactlyEntriesOf(expectedHeaders);
				assertThat(kept.decisions()).isEqualTo(decided.decisions());
			}
		}
	}

	@Test
	void aRouteStageDecidedInPlaceWritesItsHeadersAsStringsAndAsText() {
		// at the start of a minute: the window resets in 60 seconds
		RequestRateLimiter limiter = limiter(List.of(HEALTH),
				new InMemoryRateLimitStore(new MutableClock(MutableClock.DEFAULT_START_MICROS), 1000));
		RequestLimits state = new RequestLimits();
		limiter.decideRouteStage(get("/health"), limiter.matchRoutes(get("/health")), state);
		Map<String, String> text = new LinkedHashMap<>();
		limiter.writeHeaders(state, (name, value) -> text.put(name, value.toString()));
		Map<String, String> strings = new LinkedHashMap<>();
		limiter.headers(state, strings::put);

		assertThat(text).containsExactly(Map.entry("RateLimit-Policy", "\"GET /health\";q=100;w=60"),
				Map.entry("RateLimit", "\"GET /health\";r=99;t=60"));
		assertThat(strings).isEqualTo(text);
	}

	@Test
	void aRejectedRouteStageDecidedInPlaceAnswersWithTheProblemAndKeepsNothingInPlace() {
		RateLimit one = RateLimit.of("GET /health", Algorithm.FIXED_WINDOW, 1, Duration.ofMinutes(1));
		RouteLimit health = new RouteLimit(PathPatternParser.defaultInstance.parse("/health"), Set.of("GET"),
				LimitDefinition.builder(one).key(List.of(KeySource.IP)).build());
		RequestRateLimiter limiter = limiter(List.of(health));
		List<RouteLimit> matched = limiter.matchRoutes(get("/health"));
		assertThat(limiter.decideRouteStage(get("/health"), matched, new RequestLimits()).proceeds()).isTrue();

		RequestLimits state = new RequestLimits();
		Verdict rejected = limiter.decideRouteStage(get("/health"), matched, state);

		assertThat(rejected.proceeds()).isFalse();
		assertThat(rejected.problem().status()).isEqualTo(429);
		assertThat(state.keptInPlace()).isFalse();
		assertThat(state.decisions()).singleElement().satisfies((decision) -> assertThat(decision.allowed()).isFalse());
	}

	@Test
	void aRouteStageOfRoutesKeyedOnThePrincipalDecidesNothingNow() {
		RequestRateLimiter ordersOnly = limiter(List.of(ORDERS));
		RequestLimits state = new RequestLimits();

		assertThat(ordersOnly.decideRouteStage(get("/api/orders"), ordersOnly.matchRoutes(get("/api/orders")), state))
			.isNull();
		assertThat(state.takeDeferred()).containsExactly(ORDERS);
	}

	private static RouteLimit route(String pattern, KeySource key) {
		return route(pattern, key, Set.of("GET"));
	}

	/** A route as {@code ratelimit.routes} configures it, parsed by the same parser. */
	private static RouteLimit route(String pattern, KeySource key, Set<String> methods) {
		RateLimit limit = RateLimit.of("GET " + pattern, Algorithm.FIXED_WINDOW, 100, Duration.ofMinutes(1));
		return new RouteLimit(PathPatternParser.defaultInstance.parse(pattern), methods,
				LimitDefinition.builder(limit).key(List.of(key)).build());
	}

	private static RequestRateLimiter limiter(List<RouteLimit> routes) {
		return limiter(routes, new InMemoryRateLimitStore());
	}

	private static RequestRateLimiter limiter(List<RouteLimit> routes, InMemoryRateLimitStore store) {
		return limiter(routes, store, HeaderStyle.IETF);
	}

	private static RequestRateLimiter limiter(List<RouteLimit> routes, InMemoryRateLimitStore store,
			HeaderStyle style) {
		RequestIdentityResolver identities = new RequestIdentityResolver(new ClientIpResolver(List.of(), 64),
				"X-Tenant-Id", Pattern.compile("[A-Za-z0-9-]{1,64}"), List.of());
		return RequestRateLimiter
			.builder(new RateLimiter(store), new RateLimitResponses(style))
			.identities(identities)
			.routes(routes)
			.build();
	}

	private static Request get(String path) {
		return new Request("GET", path, List.of());
	}

	/** A request from 203.0.113.7; a preflight names the method it asks for. */
	private record Request(String method, String path, List<String> requestMethod) implements RateLimitRequest {

		@Override
		public String remoteAddress() {
			return "203.0.113.7";
		}

		@Override
		public List<String> headers(String name) {
			if ("Access-Control-Request-Method".equalsIgnoreCase(name)) {
				return this.requestMethod;
			}
			return "Origin".equalsIgnoreCase(name) && !this.requestMethod.isEmpty() ? List.of("https://a.example")
					: List.of();
		}

		@Override
		public Principal principal() {
			return null;
		}

		@Override
		public Object nativeRequest() {
			return this;
		}

	}

}
