package io.github.ratelimit.internal.pipeline;

import java.nio.charset.StandardCharsets;
import java.security.Principal;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;

import org.springframework.web.util.pattern.PathPatternParser;

import io.github.ratelimit.OverloadPriority;
import io.github.ratelimit.RateLimitRequest;
import io.github.ratelimit.RequestPriority;
import io.github.ratelimit.internal.overload.AdaptiveLimits;
import io.github.ratelimit.internal.overload.LimitBounds;
import io.github.ratelimit.internal.overload.OverloadLimiter;
import io.github.ratelimit.internal.overload.OverloadLimiter.Outcome;
import io.github.ratelimit.internal.overload.OverloadLimiter.Permit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Which requests the overload limit covers, at which priority, and what a status teaches it.
 */
class OverloadGateTests {

	private final OverloadLimiter limiter = OverloadLimiter
		.builder(AdaptiveLimits.AIMD.create(new LimitBounds(10, 10, 10), Duration.ZERO))
		.build();

	@Test
	void ranksByResolverThenHeaderThenRouteThenHandlerThenDefault() {
		OverloadGate gate = OverloadGate.builder(this.limiter)
			.resolvers(List.of((request) -> null,
					(request) -> "yes".equals(request.header("X-Vip")) ? RequestPriority.CRITICAL : null))
			.priorityHeader("X-Priority")
			.routes(List.of(route("/api/**", RequestPriority.SHEDDABLE), route("/api/orders/**", RequestPriority.NORMAL)))
			.defaultPriority(RequestPriority.SHEDDABLE)
			.build();
		gate.handlerPriorities(List.of(route("/api/orders/{id}", RequestPriority.CRITICAL),
				route("/checkout", RequestPriority.CRITICAL)));
		assertThat(gate.priority(get("/checkout", "X-Vip", "yes", "X-Priority", "sheddable")))
			.isEqualTo(RequestPriority.CRITICAL);
		assertThat(gate.priority(get("/checkout", "X-Priority", "sheddable"))).isEqualTo(RequestPriority.SHEDDABLE);
		assertThat(gate.priority(get("/api/search", "X-Priority", "CRITICAL"))).isEqualTo(RequestPriority.CRITICAL);
		// a value naming no priority is passed over
		assertThat(gate.priority(get("/checkout", "X-Priority", "high"))).isEqualTo(RequestPriority.CRITICAL);
		// the most specific configured route wins, and configured routes beat the handler's annotation
		assertThat(gate.priority(get("/api/orders/7"))).isEqualTo(RequestPriority.NORMAL);
		assertThat(gate.priority(get("/api/search"))).isEqualTo(RequestPriority.SHEDDABLE);
		assertThat(gate.priority(get("/checkout"))).isEqualTo(RequestPriority.CRITICAL);
		assertThat(gate.priority(get("/elsewhere"))).isEqualTo(RequestPriority.SHEDDABLE);
	}

	@Test
	void aCriticalRequestWaitsTheCriticalWaitByEitherFormThenIsShed() throws Exception {
		try (OverloadLimiter waiting = waitingLimiter(Duration.ofMillis(20))) {
			OverloadGate gate = OverloadGate.builder(waiting).build();
			Permit held = gate.acquire(RequestPriority.CRITICAL);
			assertThat(held.shed()).isFalse();
			assertThat(gate.acquire(RequestPriority.NORMAL).shed()).isTrue();
			assertThat(gate.acquire(RequestPriority.CRITICAL).shed()).isTrue();
			assertThat(gate.acquireAsync(RequestPriority.CRITICAL).get(30, TimeUnit.SECONDS).shed()).isTrue();
			// only the critical requests waited
			assertThat(waiting.waited(false)).isEqualTo(2);
			held.release(Outcome.SUCCEEDED);
			assertThat(waiting.inFlight()).isZero();
		}
	}

	@Test
	void aPlaceFreedWhileACriticalRequestWaitsIsHandedToIt() throws Exception {
		try (OverloadLimiter waiting = waitingLimiter(Duration.ofSeconds(30))) {
			OverloadGate gate = OverloadGate.builder(waiting).build();
			Permit held = gate.acquire(RequestPriority.CRITICAL);
			CompletableFuture<Permit> waiter = gate.acquireAsync(RequestPriority.CRITICAL);
			assertThat(waiter).isNotDone();
			held.release(Outcome.SUCCEEDED);
			Permit admitted = waiter.get(30, TimeUnit.SECONDS);
			assertThat(admitted.shed()).isFalse();
			assertThat(waiting.inFlight()).isOne();
			admitted.release(Outcome.SUCCEEDED);
			assertThat(waiting.inFlight()).isZero();
		}
	}

	private static OverloadLimiter waitingLimiter(Duration criticalWait) {
		return OverloadLimiter.builder(AdaptiveLimits.AIMD.create(new LimitBounds(1, 1, 1), Duration.ZERO))
			.criticalWait(criticalWait)
			.build();
	}

	@Test
	void ignoresPriorityHeadersUnlessOneIsConfigured() {
		OverloadGate gate = OverloadGate.builder(this.limiter).priorityHeader("").build();
		assertThat(gate.priority(get("/a", "X-Priority", "critical"))).isEqualTo(RequestPriority.NORMAL);
		assertThat(gate.priority(get("/a", "Priority", "critical"))).isEqualTo(RequestPriority.NORMAL);
	}

	@Test
	void neverCoversTheActuatorNorExcludedPaths() {
		OverloadGate gate = OverloadGate.builder(this.limiter)
			.excludePaths(List.of(PathPatternParser.defaultInstance.parse("/internal/**")))
			.build();
		assertThat(gate.priority(get("/actuator"))).isNull();
		assertThat(gate.priority(get("/actuator/health"))).isNull();
		assertThat(gate.priority(get("/internal/ping"))).isNull();
		assertThat(gate.priority(get("/actuatorx"))).isEqualTo(RequestPriority.NORMAL);
	}

	@Test
	void coversPathsARouterMayReadOtherwiseAndRanksThemByNothingTheySay() {
		OverloadGate gate = OverloadGate.builder(this.limiter)
			.excludePaths(List.of(PathPatternParser.defaultInstance.parse("/internal/**")))
			.routes(List.of(route("/checkout/**", RequestPriority.CRITICAL)))
			.build();
		gate.handlerPriorities(List.of(route("/checkout", RequestPriority.CRITICAL)));
		// dot segments and repeated slashes: the cleaned path is excluded or critical, the
		// request may be served by another handler, so it is covered at the default priority
		assertThat(gate.priority(get("/api/x/../../actuator/health"))).isEqualTo(RequestPriority.NORMAL);
		assertThat(gate.priority(get("//actuator/./health"))).isEqualTo(RequestPriority.NORMAL);
		assertThat(gate.priority(get("/api/../internal/ping"))).isEqualTo(RequestPriority.NORMAL);
		assertThat(gate.priority(get("/api/../checkout/pay"))).isEqualTo(RequestPriority.NORMAL);
		assertThat(gate.priority(get("//checkout"))).isEqualTo(RequestPriority.NORMAL);
		// a raw path that encoded a slash or a dot: decoded, it looks like the actuator
		assertThat(gate.priority(get("/actuator/health"), true)).isEqualTo(RequestPriority.NORMAL);
		assertThat(gate.priority(get("/checkout"), true)).isEqualTo(RequestPriority.NORMAL);
		// spelled plainly, the same paths are what they say
		assertThat(gate.priority(get("/actuator/health"))).isNull();
		assertThat(gate.priority(get("/checkout/pay"))).isEqualTo(RequestPriority.CRITICAL);
	}

	@Test
	void ranksARequestByTheHandlerThatServesItNotByAnAnnotatedPatternThatAlsoMatches() {
		OverloadGate gate = OverloadGate.builder(this.limiter).build();
		gate.handlerPriorities(List.of(route("/api/{id}", RequestPriority.CRITICAL),
				new PriorityRoute(PathPatternParser.defaultInstance.parse("/api/search"), Set.of(), null)));
		assertThat(gate.priority(get("/api/search"))).isEqualTo(RequestPriority.NORMAL);
		assertThat(gate.priority(get("/api/7"))).isEqualTo(RequestPriority.CRITICAL);
	}

	@Test
	void followsTheConfiguredManagementBasePath() {
		OverloadGate gate = OverloadGate.builder(this.limiter).managementPath("/manage/").build();
		assertThat(gate.priority(get("/manage/health"))).isNull();
		assertThat(gate.priority(get("/actuator/health"))).isEqualTo(RequestPriority.NORMAL);
		OverloadGate atRoot = OverloadGate.builder(this.limiter).managementPath("/").build();
		assertThat(atRoot.priority(get("/health"))).isEqualTo(RequestPriority.NORMAL);
	}

	@Test
	void coversOnlyTheConfiguredPathsWhenThereAreAny() {
		OverloadGate gate = OverloadGate.builder(this.limiter)
			.paths(List.of(PathPatternParser.defaultInstance.parse("/api/**")))
			.build();
		assertThat(gate.priority(get("/api/things"))).isEqualTo(RequestPriority.NORMAL);
		assertThat(gate.priority(get("/static/app.js"))).isNull();
	}

	@Test
	void routesMatchTheirMethodsAndGetRoutesMatchHead() {
		OverloadGate gate = OverloadGate.builder(this.limiter)
			.routes(List.of(new PriorityRoute(PathPatternParser.defaultInstance.parse("/orders"), Set.of("GET"),
					RequestPriority.SHEDDABLE)))
			.build();
		assertThat(gate.priority(request("GET", "/orders", Map.of()))).isEqualTo(RequestPriority.SHEDDABLE);
		assertThat(gate.priority(request("HEAD", "/orders", Map.of()))).isEqualTo(RequestPriority.SHEDDABLE);
		assertThat(gate.priority(request("POST", "/orders", Map.of()))).isEqualTo(RequestPriority.NORMAL);
	}

	@Test
	void readsTheHandlersAnnotationTheMethodsFirst() throws Exception {
		assertThat(PriorityRoute.declared(Sheddable.class.getDeclaredMethod("critical"), Sheddable.class))
			.isEqualTo(RequestPriority.CRITICAL);
		assertThat(PriorityRoute.declared(Sheddable.class.getDeclaredMethod("plain"), Sheddable.class))
			.isEqualTo(RequestPriority.SHEDDABLE);
		assertThat(PriorityRoute.declared(Object.class.getDeclaredMethod("toString"), Object.class)).isNull();
	}

	@Test
	void teachesTheLimitFromServerErrorsAndSuccessesOnly() {
		assertThat(OverloadGate.outcome(200)).isEqualTo(Outcome.SUCCEEDED);
		assertThat(OverloadGate.outcome(304)).isEqualTo(Outcome.SUCCEEDED);
		assertThat(OverloadGate.outcome(404)).isEqualTo(Outcome.IGNORED);
		assertThat(OverloadGate.outcome(429)).isEqualTo(Outcome.IGNORED);
		assertThat(OverloadGate.outcome(500)).isEqualTo(Outcome.DROPPED);
		assertThat(OverloadGate.outcome(503)).isEqualTo(Outcome.DROPPED);
	}

	@Test
	void streamsAndClientsGoneAwayTeachTheLimitNothing() {
		assertThat(OverloadGate.outcome(200, "text/event-stream")).isEqualTo(Outcome.IGNORED);
		assertThat(OverloadGate.outcome(200, "application/x-ndjson;charset=UTF-8")).isEqualTo(Outcome.IGNORED);
		assertThat(OverloadGate.outcome(500, "text/event-stream")).isEqualTo(Outcome.DROPPED);
		assertThat(OverloadGate.outcome(200, "application/json")).isEqualTo(Outcome.SUCCEEDED);
		assertThat(OverloadGate.outcome(200, null)).isEqualTo(Outcome.SUCCEEDED);
		assertThat(OverloadGate.outcome(new java.io.IOException("Broken pipe"))).isEqualTo(Outcome.IGNORED);
		assertThat(OverloadGate.outcome(new java.io.IOException("Connection reset by peer")))
			.isEqualTo(Outcome.IGNORED);
		assertThat(OverloadGate.outcome(new IllegalStateException("database down"))).isEqualTo(Outcome.DROPPED);
	}

	@Test
	void answersATurnedAwayRequestWithAProblemNamingItsPriority() {
		OverloadGate gate = OverloadGate.builder(this.limiter).retryAfter(Duration.ofMillis(2500)).build();
		ProblemResponse problem = gate.shed(RequestPriority.SHEDDABLE);
		assertThat(problem.status()).isEqualTo(503);
		assertThat(problem.headers()).containsEntry("Retry-After", "3").containsEntry("Cache-Control", "no-store");
		assertThat(new String(problem.body(), StandardCharsets.UTF_8)).isEqualTo(
				"{\"type\":\"https://iana.org/assignments/http-problem-types#temporary-reduced-capacity\","
						+ "\"title\":\"Temporary reduced capacity\",\"status\":503,\"detail\":\"The service is "
						+ "overloaded and turns away sheddable requests; retry after 3 seconds.\","
						+ "\"priority\":\"sheddable\"}");
	}

	private static PriorityRoute route(String pattern, RequestPriority priority) {
		return new PriorityRoute(PathPatternParser.defaultInstance.parse(pattern), Set.of(), priority);
	}

	private static RateLimitRequest get(String path, String... headers) {
		Map<String, String> values = new java.util.HashMap<>();
		for (int i = 0; i < headers.length; i += 2) {
			values.put(headers[i].toLowerCase(java.util.Locale.ROOT), headers[i + 1]);
		}
		return request("GET", path, values);
	}

	private static RateLimitRequest request(String method, String path, Map<String, String> headers) {
		return new RateLimitRequest() {

			@Override
			public String method() {
				return method;
			}

			@Override
			public String path() {
				return path;
			}

			@Override
			public List<String> headers(String name) {
				String value = headers.get(name.toLowerCase(java.util.Locale.ROOT));
				return (value != null) ? List.of(value) : List.of();
			}

			@Override
			public @Nullable String remoteAddress() {
				return "127.0.0.1";
			}

			@Override
			public @Nullable Principal principal() {
				return null;
			}

			@Override
			public Object nativeRequest() {
				return this;
			}

		};
	}

	@OverloadPriority(RequestPriority.SHEDDABLE)
	static class Sheddable {

		@OverloadPriority(RequestPriority.CRITICAL)
		void critical() {
		}

		void plain() {
		}

	}

}
