package io.github.ratelimit.internal.core;

import java.time.Duration;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.FailMode;
import io.github.ratelimit.KeySource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The resolver remembers every place it resolved a limit for, and where each value came
 * from, for operators to see.
 */
class ResolvedLimitSourcesTest {

	private static final String ANNOTATED = "@RateLimited on com.example.Search.find(String)";

	private static final LimitSettings SEARCH_POLICY = LimitSettings.builder()
		.algorithm(Algorithm.SLIDING_WINDOW_COUNTER)
		.capacity(1000L)
		.period(Duration.ofMinutes(1))
		.key(List.of(KeySource.IP))
		.failMode(FailMode.CLOSED)
		.build();

	private final LimitResolver resolver = LimitResolver.builder()
		.policies(Map.of("search", SEARCH_POLICY))
		.defaultKey(List.of(KeySource.PRINCIPAL, KeySource.IP))
		.candidates(Map.of("search", LimitSettings.builder().algorithm(Algorithm.FIXED_WINDOW).build()))
		.build();

	@Test
	void aPolicyOverridesTheAnnotationPropertyByProperty() {
		this.resolver.resolve("search", LimitSettings.builder().algorithm(Algorithm.TOKEN_BUCKET).capacity(10L).cost(2L).build(),
				ANNOTATED);
		this.resolver.guards("search", ANNOTATED, "GET /search");
		ResolvedLimit resolved = this.resolver.resolvedLimits().get(0);
		assertThat(resolved.name()).isEqualTo("search");
		assertThat(resolved.origin()).isEqualTo(ANNOTATED);
		assertThat(resolved.routes()).containsExactly("GET /search");
		assertThat(resolved.definition().limit().capacity()).isEqualTo(1000);
		assertThat(resolved.definition().candidate().algorithm()).isEqualTo(Algorithm.FIXED_WINDOW);
		assertThat(resolved.sources()).containsExactly(
				Map.entry("algorithm", "ratelimit.policies.search.algorithm"),
				Map.entry("capacity", "ratelimit.policies.search.capacity"), Map.entry("refillTokens", "default"),
				Map.entry("period", "ratelimit.policies.search.period"), Map.entry("cost", "annotation"),
				Map.entry("key", "ratelimit.policies.search.key"), Map.entry("keyExpression", "default"),
				Map.entry("failMode", "ratelimit.policies.search.fail-mode"), Map.entry("shadow", "default"),
				Map.entry("calendar", "default"), Map.entry("timeZone", "default"), Map.entry("unit", "default"),
				Map.entry("estimate", "default"), Map.entry("actualCost", "default"),
				Map.entry("actualCostHeader", "default"));
	}

	@Test
	void aRouteOverridesThePolicyItNames() {
		this.resolver.resolveRoute("search", LimitSettings.builder().capacity(50L).cost(5L).build(),
				"ratelimit.routes[2]");
		this.resolver.guards("search", "ratelimit.routes[2]", "POST /reports/**");
		ResolvedLimit resolved = this.resolver.resolvedLimits().get(0);
		assertThat(resolved.routes()).containsExactly("POST /reports/**");
		assertThat(resolved.sources()).containsEntry("capacity", "ratelimit.routes[2].capacity")
			.containsEntry("cost", "ratelimit.routes[2].cost")
			.containsEntry("algorithm", "ratelimit.policies.search.algorithm");
	}

	@Test
	void listsEachPlaceOnceInTheOrderResolved() {
		LimitSettings orders = LimitSettings.builder().capacity(5L).build();
		this.resolver.resolve("orders", orders, "@RateLimited on A.a()");
		this.resolver.resolve("orders", orders, "@RateLimited on B.b()");
		this.resolver.resolve("orders", orders, "@RateLimited on A.a()");
		this.resolver.guards("orders", "@RateLimited on unknown.place()", "GET /nowhere");
		assertThat(this.resolver.resolvedLimits()).extracting(ResolvedLimit::origin)
			.containsExactly("@RateLimited on A.a()", "@RateLimited on B.b()");
		assertThat(this.resolver.resolvedLimits()).allSatisfy((resolved) -> assertThat(resolved.routes()).isEmpty());
	}

	@Test
	void resolvesAPolicyOnItsOwnWithoutClaimingItsName() {
		ResolvedLimit policy = this.resolver.policy("search");
		assertThat(policy.origin()).isEqualTo("ratelimit.policies.search");
		assertThat(policy.definition().limit().algorithm()).isEqualTo(Algorithm.SLIDING_WINDOW_COUNTER);
		assertThat(policy.sources()).containsEntry("cost", "default");
		assertThat(this.resolver.resolvedLimits()).isEmpty();
		assertThat(this.resolver.policy("missing")).isNull();
		assertThat(this.resolver.policyNames()).containsExactly("search");
	}

}
