package io.github.ratelimit.internal.pipeline;

import java.security.Principal;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;

import org.junit.jupiter.api.Test;

import org.springframework.web.util.pattern.PathPatternParser;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.FailMode;
import io.github.ratelimit.KeySource;
import io.github.ratelimit.RateLimitRequest;
import io.github.ratelimit.RateLimited;
import io.github.ratelimit.internal.core.CountedOutcomes;
import io.github.ratelimit.internal.core.LimitDefinition;
import io.github.ratelimit.internal.core.RateLimiter;
import io.github.ratelimit.internal.memory.InMemoryRateLimitStore;
import io.github.ratelimit.store.RateLimit;
import io.github.ratelimit.store.contract.MutableClock;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A route stage that nothing can follow is decided alone, keeping no state for the
 * request: it answers and writes the headers a stage recorded in a state would, and an
 * admitted one comes to the shared verdict.
 */
class RequestRateLimiterAloneTests {

	private static final RateLimit HEALTH_LIMIT = RateLimit.of("GET /health", Algorithm.FIXED_WINDOW, 100,
			Duration.ofMinutes(1));

	private static final RouteLimit HEALTH = route(LimitDefinition.builder(HEALTH_LIMIT).key(List.of(KeySource.IP)));

	@Test
	void aStageIsDecidedAloneOnlyWhenItLeavesNothingToDoAndNoLimitedCallCanJoinTheRequest() {
		assertThat(limiter(List.of(HEALTH), false).decidesAlone(List.of(HEALTH))).isTrue();
		assertThat(limiter(List.of(HEALTH), true).decidesAlone(List.of(HEALTH))).as("a limited call may join")
			.isFalse();
		RequestRateLimiter byDefault = RequestRateLimiter
			.builder(new RateLimiter(new InMemoryRateLimitStore()), new RateLimitResponses(HeaderStyle.IETF))
			.routes(List.of(HEALTH))
			.build();
		assertThat(byDefault.decidesAlone(List.of(HEALTH))).as("unless told, a limited call may join").isFalse();

		RouteLimit principal = route(LimitDefinition.builder(HEALTH_LIMIT).key(List.of(KeySource.PRINCIPAL)));
		RouteLimit counted = route(LimitDefinition.builder(HEALTH_LIMIT)
			.key(List.of(KeySource.IP))
			.countStatuses(CountedStatuses.parse(List.of("5xx"))));
		RouteLimit concurrency = route(LimitDefinition
			.builder(RateLimit.of("GET /health", Algorithm.CONCURRENCY, 10, Duration.ofMinutes(1)))
			.key(List.of(KeySource.IP)));
		RouteLimit candidate = route(LimitDefinition.builder(HEALTH_LIMIT)
			.key(List.of(KeySource.IP))
			.candidate(new RateLimit("GET /health" + RateLimit.CANDIDATE_SUFFIX, Algorithm.FIXED_WINDOW, 50, 0,
					Duration.ofMinutes(1), FailMode.OPEN, true)));
		RequestRateLimiter limiter = limiter(List.of(HEALTH, principal, counted, concurrency, candidate), false);
		assertThat(limiter.decidesAlone(List.of(HEALTH, HEALTH))).as("two routes").isFalse();
		assertThat(limiter.decidesAlone(List.of(principal))).as("waits for the principal").isFalse();
		assertThat(limiter.decidesAlone(List.of(counted))).as("settled by status").isFalse();
		assertThat(limiter.decidesAlone(List.of(concurrency))).as("holds a permit").isFalse();
		assertThat(limiter.decidesAlone(List.of(candidate))).as("has a candidate").isFalse();
	}

	@Test
	void aLimitedMethodFoundMakesRouteStagesKeepTheirState() throws NoSuchMethodException {
		RateLimitedMethods methods = new RateLimitedMethods();
		RequestRateLimiter limiter = RequestRateLimiter
			.builder(new RateLimiter(new InMemoryRateLimitStore()), new RateLimitResponses(HeaderStyle.IETF))
			.routes(List.of(HEALTH))
			.callLimits(methods::anyFound)
			.build();
		methods.find(Object.class.getMethod("toString"), Object.class);
		assertThat(limiter.decidesAlone(List.of(HEALTH))).isTrue();

		methods.find(Limited.class.getMethod("call"), Limited.class);

		assertThat(methods.anyFound()).isTrue();
		assertThat(limiter.decidesAlone(List.of(HEALTH))).isFalse();
	}

	@Test
	void aStageDecidedAloneAnswersAndWritesTheHeadersOfAStageRecordedInAState() {
		for (HeaderStyle style : HeaderStyle.values()) {
			MutableClock clock = new MutableClock(MutableClock.DEFAULT_START_MICROS);
			RequestRateLimiter alone = limiter(List.of(HEALTH), new InMemoryRateLimitStore(clock, 1000), style);
			RequestRateLimiter recorded = limiter(List.of(HEALTH), new InMemoryRateLimitStore(clock, 1000), style);
			for (int i = 0; i < 3; i++) {
				Map<String, String> headers = new LinkedHashMap<>();
				Verdict verdict = alone.decideAlone(get(), HEALTH, (name, value) -> headers.put(name, value.toString()));
				RequestLimits state = new RequestLimits();
				Verdict expected = recorded.decideRouteStage(get(), List.of(HEALTH), state);
				Map<String, String> expectedHeaders = new LinkedHashMap<>();
				recorded.writeHeaders(state, (name, value) -> expectedHeaders.put(name, value.toString()));
				clock.advance(Duration.ofSeconds(7));

				assertThat(verdict).as("the shared verdict: nothing made for the request").isSameAs(Verdict.PROCEED);
				assertThat(verdict).isEqualTo(expected);
				assertThat(headers).as(style.name()).containsExactlyEntriesOf(expectedHeaders);
			}
		}
	}

	@Test
	void aRequestDecidedAloneHasNothingToSettleOrGiveBack() {
		RequestRateLimiter limiter = limiter(List.of(HEALTH), false);
		Map<String, String> first = new LinkedHashMap<>();
		limiter.decideAlone(get(), HEALTH, (name, value) -> first.put(name, value.toString()));

		// no state: what a web stack does once the status is final, or the call is over
		limiter.settle(null, 500);
		assertThat(limiter.settleAsync(null, 500).toCompletableFuture()).isCompleted();
		assertThat(limiter.releaseHeldAsync(null).toCompletableFuture()).isCompleted();

		Map<String, String> second = new LinkedHashMap<>();
		limiter.decideAlone(get(), HEALTH, (name, value) -> second.put(name, value.toString()));
		assertThat(first.get("RateLimit")).endsWith(";r=99;t=60");
		assertThat(second.get("RateLimit")).as("nothing was given back").endsWith(";r=98;t=60");
	}

	@Test
	void aRejectedStageDecidedAloneAnswersWithTheProblemAndWritesNoHeaders() {
		RouteLimit one = route(LimitDefinition
			.builder(RateLimit.of("GET /health", Algorithm.FIXED_WINDOW, 1, Duration.ofMinutes(1)))
			.key(List.of(KeySource.IP)));
		RequestRateLimiter limiter = limiter(List.of(one), false);
		assertThat(limiter.decideAlone(get(), one, (name, value) -> {
		}).proceeds()).isTrue();

		Map<String, String> headers = new LinkedHashMap<>();
		Verdict rejected = limiter.decideAlone(get(), one, (name, value) -> headers.put(name, value.toString()));

		assertThat(rejected.proceeds()).isFalse();
		assertThat(rejected.problem().status()).isEqualTo(429);
		assertThat(rejected.problem().headers()).containsKeys("Retry-After", "RateLimit");
		assertThat(headers).isEmpty();
	}

	@Test
	void aShadowLimitThatWouldRejectLetsTheRequestProceedWithItsHeaders() {
		RouteLimit shadow = route(LimitDefinition.builder(new RateLimit("GET /health", Algorithm.FIXED_WINDOW, 1, 0,
				Duration.ofMinutes(1), FailMode.OPEN, true))
			.key(List.of(KeySource.IP)));
		RequestRateLimiter alone = limiter(List.of(shadow), false);
		RequestRateLimiter recorded = limiter(List.of(shadow), false);
		for (int i = 0; i < 2; i++) {
			Map<String, String> headers = new LinkedHashMap<>();
			Verdict verdict = alone.decideAlone(get(), shadow, (name, value) -> headers.put(name, value.toString()));
			RequestLimits state = new RequestLimits();
			Verdict expected = recorded.decideRouteStage(get(), List.of(shadow), state);
			Map<String, String> expectedHeaders = new LinkedHashMap<>();
			recorded.writeHeaders(state, (name, value) -> expectedHeaders.put(name, value.toString()));

			assertThat(verdict.proceeds()).isTrue();
			assertThat(verdict).isEqualTo(expected);
			assertThat(headers).isNotEmpty().containsExactlyEntriesOf(expectedHeaders);
		}
	}

	@Test
	void aLeakyBucketDecidedAloneHoldsTheRequestUntilItsDrainSlot() {
		RouteLimit leaky = route(LimitDefinition
			.builder(RateLimit.of("GET /health", Algorithm.LEAKY_BUCKET, 10, Duration.ofSeconds(10)))
			.key(List.of(KeySource.IP)));
		MutableClock clock = new MutableClock(MutableClock.DEFAULT_START_MICROS);
		RequestRateLimiter alone = limiter(List.of(leaky), new InMemoryRateLimitStore(clock, 1000), HeaderStyle.IETF);
		RequestRateLimiter recorded = limiter(List.of(leaky), new InMemoryRateLimitStore(clock, 1000),
				HeaderStyle.IETF);
		for (int i = 0; i < 3; i++) {
			Verdict verdict = alone.decideAlone(get(), leaky, (name, value) -> {
			});
			Verdict expected = recorded.decideRouteStage(get(), List.of(leaky), new RequestLimits());

			assertThat(verdict).isEqualTo(expected);
		}
		assertThat(alone.decideAlone(get(), leaky, (name, value) -> {
		}).delayMicros()).isPositive();
	}

	private static RouteLimit route(LimitDefinition.Builder definition) {
		return new RouteLimit(PathPatternParser.defaultInstance.parse("/health"), Set.of("GET"), definition.build());
	}

	private static RequestRateLimiter limiter(List<RouteLimit> routes, boolean callLimits) {
		return limiter(routes, new InMemoryRateLimitStore(new MutableClock(MutableClock.DEFAULT_START_MICROS), 1000),
				HeaderStyle.IETF, callLimits);
	}

	private static RequestRateLimiter limiter(List<RouteLimit> routes, InMemoryRateLimitStore store,
			HeaderStyle style) {
		return limiter(routes, store, style, false);
	}

	private static RequestRateLimiter limiter(List<RouteLimit> routes, InMemoryRateLimitStore store,
			HeaderStyle style, boolean callLimits) {
		RequestIdentityResolver identities = new RequestIdentityResolver(new ClientIpResolver(List.of(), 64),
				"X-Tenant-Id", Pattern.compile("[A-Za-z0-9-]{1,64}"), List.of());
		return RequestRateLimiter.builder(new RateLimiter(store), new RateLimitResponses(style))
			.identities(identities)
			.routes(routes)
			.callLimits(() -> callLimits)
			.build();
	}

	private static RateLimitRequest get() {
		return new Request("GET", "/health");
	}

	/** A bean with a limited method. */
	static class Limited {

		@RateLimited(name = "calls", capacity = 10)
		public void call() {
		}

	}

	/** A request from 203.0.113.7. */
	private record Request(String method, String path) implements RateLimitRequest {

		@Override
		public String remoteAddress() {
			return "203.0.113.7";
		}

		@Override
		public List<String> headers(String name) {
			return List.of();
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
