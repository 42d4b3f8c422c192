package io.github.ratelimit.internal.webflux;

import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.regex.Pattern;

import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;

import org.springframework.http.HttpStatus;
import org.springframework.mock.http.server.reactive.MockServerHttpRequest;
import org.springframework.mock.web.server.MockServerWebExchange;
import org.springframework.web.server.WebFilterChain;
import org.springframework.web.util.pattern.PathPatternParser;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.FailMode;
import io.github.ratelimit.KeySource;
import io.github.ratelimit.internal.core.LimitDefinition;
import io.github.ratelimit.internal.core.RateLimiter;
import io.github.ratelimit.internal.memory.InMemoryRateLimitStore;
import io.github.ratelimit.internal.pipeline.AsyncOnlyStore;
import io.github.ratelimit.internal.pipeline.ClientIpResolver;
import io.github.ratelimit.internal.pipeline.CountedStatuses;
import io.github.ratelimit.internal.pipeline.HeaderStyle;
import io.github.ratelimit.internal.pipeline.RateLimitResponses;
import io.github.ratelimit.internal.pipeline.RequestIdentityResolver;
import io.github.ratelimit.internal.pipeline.RequestLimits;
import io.github.ratelimit.internal.pipeline.RequestRateLimiter;
import io.github.ratelimit.internal.pipeline.RouteLimit;
import io.github.ratelimit.store.Acquisition;
import io.github.ratelimit.store.RateLimit;
import io.github.ratelimit.store.contract.MutableClock;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A reactive stage decided on the calling thread (the in-memory store) is carried out at
 * once; one the store still decides is carried out when its answer arrives.
 */
class RateLimitWebFilterDecideTests {

	private static final RateLimit SEARCH = RateLimit.of("search", Algorithm.FIXED_WINDOW, 1, Duration.ofMinutes(1));

	private final AsyncOnlyStore store = new AsyncOnlyStore(new InMemoryRateLimitStore());

	private final RequestRateLimiter limiter = RequestRateLimiter
		.builder(new RateLimiter(this.store), new RateLimitResponses(HeaderStyle.IETF))
		.build();

	private final AtomicInteger chained = new AtomicInteger();

	/** The {@code RateLimit} header as the chain found it. */
	private final AtomicReference<String> seenByChain = new AtomicReference<>();

	private Mono<Void> next = Mono.empty();

	private final WebFilterChain chain = (exchange) -> {
		this.chained.incrementAndGet();
		this.seenByChain.set(exchange.getResponse().getHeaders().getFirst("RateLimit"));
		return this.next;
	};

	@Test
	void aStageDecidedInMemoryGoesOnBeforeAnythingWaits() {
		MockServerWebExchange exchange = exchange();

		Mono<Void> answered = decide(exchange);

		assertThat(this.chained).hasValue(1);
		assertThat(this.seenByChain.get()).as("set before the handler runs").startsWith("\"search\";r=0;t=");
		answered.block(Duration.ofSeconds(5));

		MockServerWebExchange rejected = exchange();
		decide(rejected).block(Duration.ofSeconds(5));
		assertThat(this.chained).as("the rejected request goes no further").hasValue(1);
		assertThat(rejected.getResponse().getStatusCode()).isEqualTo(HttpStatus.TOO_MANY_REQUESTS);
	}

	@Test
	void aStageTheStoreStillDecidesGoesOnWhenItsAnswerArrives() {
		CompletableFuture<Void> reply = new CompletableFuture<>();
		this.store.holdDecisionsUntil(reply);
		MockServerWebExchange exchange = exchange();

		Mono<Void> answered = decide(exchange);

		assertThat(this.chained).hasValue(0);
		assertThat(advertised(exchange)).isNull();
		reply.complete(null);
		answered.block(Duration.ofSeconds(5));
		assertThat(this.chained).hasValue(1);
		assertThat(advertised(exchange)).startsWith("\"search\";r=0;t=");
	}

	@Test
	void aLaterStageThatCannotBeDecidedTakesBackWhatEarlierStagesAdvertised() {
		RateLimit closed = new RateLimit("closed", Algorithm.FIXED_WINDOW, 1, 0, Duration.ofMinutes(1),
				FailMode.CLOSED);
		this.store.failDecisionsOf(closed);
		MockServerWebExchange exchange = exchange();
		RequestLimits state = new RequestLimits();
		RateLimitWebFilter.decide(exchange, List.of(new Acquisition(SEARCH, "client", 1)), state, 0, this.limiter,
				(admitted) -> RateLimitWebFilter.decide(admitted, List.of(new Acquisition(closed, "client", 1)), state,
						0, this.limiter, this.chain))
			.block(Duration.ofSeconds(5));

		assertThat(exchange.getResponse().getStatusCode()).isEqualTo(HttpStatus.SERVICE_UNAVAILABLE);
		assertThat(exchange.getResponse().getHeaders().getFirst("Retry-After")).isEqualTo("1");
		assertThat(advertised(exchange)).as("the route stage's unit was given back").isNull();
		assertThat(this.store.asyncRefunds()).isEqualTo(1);
	}

	@Test
	void aClientGoneWhileTheHandlerRunsKeepsWhatTheStageTook() {
		this.next = Mono.never();
		MockServerWebExchange exchange = exchange();

		decide(exchange).subscribe().dispose();

		assertThat(this.chained).hasValue(1);
		assertThat(this.store.asyncRefunds()).as("nothing given back").isZero();
		assertThat(this.store.inspect(SEARCH, "client").remaining()).isZero();
	}

	@Test
	void aClientGoneBeforeTheDecisionArrivedKeepsNothingItGrants() {
		CompletableFuture<Void> reply = new CompletableFuture<>();
		this.store.holdDecisionsUntil(reply);

		decide(exchange()).subscribe().dispose();
		reply.complete(null);

		assertThat(this.chained).as("the stage never began").hasValue(0);
		assertThat(this.store.asyncRefunds()).isEqualTo(1);
		assertThat(this.store.inspect(SEARCH, "client").remaining()).isEqualTo(1);
	}

	@Test
	void aClientGoneWhileWaitingForItsDrainSlotKeepsNothing() {
		RateLimit leaky = new RateLimit("leaky", Algorithm.LEAKY_BUCKET, 2, 1, Duration.ofHours(1), FailMode.OPEN);
		MockServerWebExchange first = exchange();
		RateLimitWebFilter.decide(first, List.of(new Acquisition(leaky, "client", 1)), new RequestLimits(), 0,
				this.limiter, this.chain)
			.block(Duration.ofSeconds(5));

		// the second request's slot is an hour ahead: its client goes away while it waits
		RateLimitWebFilter.decide(exchange(), List.of(new Acquisition(leaky, "client", 1)), new RequestLimits(), 0,
				this.limiter, this.chain)
			.subscribe()
			.dispose();

		assertThat(this.chained).as("only the first request went on").hasValue(1);
		assertThat(this.store.asyncRefunds()).as("the waiting request's slot").isEqualTo(1);
		assertThat(this.store.inspect(leaky, "client").remaining()).isEqualTo(1);
	}

	@Test
	void aClientGoneWhileALaterStageIsDecidedKeepsWhatTheEarlierStageBeganWith() {
		CompletableFuture<Void> reply = new CompletableFuture<>();
		RateLimit handler = RateLimit.of("handler", Algorithm.FIXED_WINDOW, 1, Duration.ofMinutes(1));
		RequestLimits state = new RequestLimits();
		WebFilterChain securityThenHandler = (admitted) -> {
			// the route stage admitted the request: Spring Security runs, then the handler stage waits for the store
			this.store.holdDecisionsUntil(reply);
			return RateLimitWebFilter.decide(admitted, List.of(new Acquisition(handler, "client", 1)), state, 0,
					this.limiter, this.chain);
		};
		RateLimitWebFilter.decide(exchange(), List.of(new Acquisition(SEARCH, "client", 1)), state, 0, this.limiter,
				securityThenHandler)
			.subscribe()
			.dispose();
		reply.complete(null);

		assertThat(this.chained).as("the handler never ran").hasValue(0);
		assertThat(this.store.inspect(SEARCH, "client").remaining()).as("the route stage's unit is kept").isZero();
		assertThat(this.store.inspect(handler, "client").remaining()).as("the handler stage's is given back")
			.isEqualTo(1);
	}

	@Test
	void aCancelledExchangeCountsForALimitCountingSomeStatuses() {
		this.next = Mono.never();
		RequestLimits state = new RequestLimits();
		List<Acquisition> signIns = List.of(new Acquisition(SEARCH, "client", 1));
		state.countOnly(signIns, CountedStatuses.parse(List.of("401")));

		RateLimitWebFilter.decide(exchange(), signIns, state, 0, this.limiter, this.chain).subscribe().dispose();

		// its status is never known: it counts
		assertThat(this.store.asyncRefunds()).isZero();
		assertThat(this.store.inspect(SEARCH, "client").remaining()).isZero();
	}

	@Test
	void aCancelledExchangeHoldsItsConcurrencyPermitUntilTheLease() {
		MutableClock clock = new MutableClock();
		RequestRateLimiter limiter = RequestRateLimiter
			.builder(new RateLimiter(new InMemoryRateLimitStore(clock, 100)), new RateLimitResponses(HeaderStyle.IETF))
			.build();
		RateLimit exports = RateLimit.of("exports", Algorithm.CONCURRENCY, 1, Duration.ofMinutes(5));
		this.next = Mono.never();
		RateLimitWebFilter.decide(exchange(), List.of(new Acquisition(exports, "client", 1)), new RequestLimits(), 0,
				limiter, this.chain)
			.subscribe()
			.dispose();

		// the handler's work may still run: no second call starts
		MockServerWebExchange second = exchange();
		RateLimitWebFilter.decide(second, List.of(new Acquisition(exports, "client", 1)), new RequestLimits(), 0,
				limiter, this.chain)
			.block(Duration.ofSeconds(5));
		assertThat(second.getResponse().getStatusCode()).isEqualTo(HttpStatus.TOO_MANY_REQUESTS);

		clock.advance(Duration.ofMinutes(5));
		this.next = Mono.empty();
		MockServerWebExchange afterTheLease = exchange();
		RateLimitWebFilter.decide(afterTheLease, List.of(new Acquisition(exports, "client", 1)), new RequestLimits(),
				0, limiter, this.chain)
			.block(Duration.ofSeconds(5));
		assertThat(afterTheLease.getResponse().getStatusCode()).isNotEqualTo(HttpStatus.TOO_MANY_REQUESTS);
		assertThat(this.chained).hasValue(2);
	}

	@Test
	void aRouteStageInMemoryIsDecidedInPlaceAndAnsweredAsTheAsynchronousStageIs() {
		RateLimit one = RateLimit.of("GET /search/**", Algorithm.FIXED_WINDOW, 1, Duration.ofMinutes(1));
		RouteLimit route = new RouteLimit(PathPatternParser.defaultInstance.parse("/search/**"), Set.of("GET"),
				LimitDefinition.builder(one).key(List.of(KeySource.IP)).build());
		InMemoryRateLimitStore memory = new InMemoryRateLimitStore(
				new MutableClock(MutableClock.DEFAULT_START_MICROS), 100);
		RequestRateLimiter inMemory = RequestRateLimiter
			.builder(new RateLimiter(memory), new RateLimitResponses(HeaderStyle.IETF))
			.identities(new RequestIdentityResolver(new ClientIpResolver(List.of(), 64), "X-Tenant-Id",
					Pattern.compile("[A-Za-z0-9-]{1,64}"), List.of()))
			.routes(List.of(route))
			.build();
		assertThat(inMemory.decidesOnCallingThread()).isTrue();
		RateLimitWebFilter filter = new RateLimitWebFilter(inMemory, RateLimitWebFilter.DEFAULT_ORDER);

		MockServerWebExchange admitted = routeExchange();
		filter.filter(admitted, this.chain).block(Duration.ofSeconds(5));
		assertThat(this.chained).hasValue(1);
		assertThat(this.seenByChain.get()).isEqualTo("\"GET /search/**\";r=0;t=60");
		assertThat(admitted.getResponse().getHeaders().getFirst("RateLimit-Policy"))
			.isEqualTo("\"GET /search/**\";q=1;w=60");

		MockServerWebExchange rejected = routeExchange();
		filter.filter(rejected, this.chain).block(Duration.ofSeconds(5));
		assertThat(this.chained).as("the rejected request goes no further").hasValue(1);
		assertThat(rejected.getResponse().getStatusCode()).isEqualTo(HttpStatus.TOO_MANY_REQUESTS);
		assertThat(rejected.getResponse().getHeaders().getFirst("Retry-After")).isEqualTo("60");
	}

	@Test
	void aRouteStageNothingCanFollowKeepsNoStateAndAnswersAsOneThatDoes() {
		RateLimit one = RateLimit.of("GET /search/**", Algorithm.FIXED_WINDOW, 1, Duration.ofMinutes(1));
		RateLimitWebFilter alone = routeFilter(one, false);
		RateLimitWebFilter recorded = routeFilter(one, true);

		MockServerWebExchange admitted = routeExchange();
		MockServerWebExchange admittedWithState = routeExchange();
		alone.filter(admitted, this.chain).block(Duration.ofSeconds(5));
		String seenAlone = this.seenByChain.get();
		recorded.filter(admittedWithState, this.chain).block(Duration.ofSeconds(5));

		assertThat(this.chained).hasValue(2);
		assertThat(seenAlone).as("set before the handler runs").isEqualTo("\"GET /search/**\";r=0;t=60");
		assertThat(admitted.getResponse().getHeaders().toSingleValueMap())
			.isEqualTo(admittedWithState.getResponse().getHeaders().toSingleValueMap());
		assertThat(admitted.getAttributes()).as("nothing kept for the request")
			.doesNotContainKey(RequestLimits.ATTRIBUTE);
		assertThat(admittedWithState.getAttributes()).as("a limited call could join it")
			.containsKey(RequestLimits.ATTRIBUTE);

		MockServerWebExchange rejected = routeExchange();
		MockServerWebExchange rejectedWithState = routeExchange();
		alone.filter(rejected, this.chain).block(Duration.ofSeconds(5));
		recorded.filter(rejectedWithState, this.chain).block(Duration.ofSeconds(5));

		assertThat(this.chained).as("the rejected requests go no further").hasValue(2);
		assertThat(rejected.getResponse().getStatusCode()).isEqualTo(HttpStatus.TOO_MANY_REQUESTS);
		assertThat(rejected.getResponse().getHeaders().toSingleValueMap())
			.isEqualTo(rejectedWithState.getResponse().getHeaders().toSingleValueMap())
			.containsEntry("Retry-After", "60");
		assertThat(rejected.getResponse().getBodyAsString().block(Duration.ofSeconds(5)))
			.isEqualTo(rejectedWithState.getResponse().getBodyAsString().block(Duration.ofSeconds(5)));
	}

	@Test
	void aLeakyBucketRouteKeepsItsStateSoThatAClientGoneBeforeItsSlotKeepsNothing() {
		RateLimit leaky = RateLimit.of("GET /search/**", Algorithm.LEAKY_BUCKET, 10, Duration.ofSeconds(10));
		MockServerWebExchange exchange = routeExchange();

		routeFilter(leaky, false).filter(exchange, this.chain).block(Duration.ofSeconds(5));

		assertThat(this.chained).hasValue(1);
		assertThat(exchange.getAttributes()).containsKey(RequestLimits.ATTRIBUTE);
	}

	private static RateLimitWebFilter routeFilter(RateLimit limit, boolean callLimits) {
		RouteLimit route = new RouteLimit(PathPatternParser.defaultInstance.parse("/search/**"), Set.of("GET"),
				LimitDefinition.builder(limit).key(List.of(KeySource.IP)).build());
		RequestRateLimiter limiter = RequestRateLimiter
			.builder(new RateLimiter(new InMemoryRateLimitStore(new MutableClock(MutableClock.DEFAULT_START_MICROS), 100)),
					new RateLimitResponses(HeaderStyle.IETF))
			.identities(new RequestIdentityResolver(new ClientIpResolver(List.of(), 64), "X-Tenant-Id",
					Pattern.compile("[A-Za-z0-9-]{1,64}"), List.of()))
			.routes(List.of(route))
			.callLimits(() -> callLimits)
			.build();
		return new RateLimitWebFilter(limiter, RateLimitWebFilter.DEFAULT_ORDER);
	}

	private static MockServerWebExchange routeExchange() {
		return MockServerWebExchange
			.from(MockServerHttpRequest.get("/search/items").remoteAddress(new InetSocketAddress("203.0.113.7", 4000)));
	}

	private Mono<Void> decide(MockServerWebExchange exchange) {
		return RateLimitWebFilter.decide(exchange, List.of(new Acquisition(SEARCH, "client", 1)), new RequestLimits(),
				0, this.limiter, this.chain);
	}

	private static String advertised(MockServerWebExchange exchange) {
		return exchange.getResponse().getHeaders().getFirst("RateLimit");
	}

	private static MockServerWebExchange exchange() {
		return MockServerWebExchange.from(MockServerHttpRequest.get("/search"));
	}

}
