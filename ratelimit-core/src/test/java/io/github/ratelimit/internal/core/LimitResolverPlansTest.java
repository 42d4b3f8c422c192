package io.github.ratelimit.internal.core;

import java.time.Duration;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.FailMode;
import io.github.ratelimit.KeySource;
import io.github.ratelimit.RateLimitConfigurationException;
import io.github.ratelimit.store.RateLimit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * How the plans of a policy become limits: the policy's limit with the plan's values over
 * it, under the policy's name, and what a plan may not change.
 */
class LimitResolverPlansTest {

	private static final LimitSettings API = settings(Algorithm.TOKEN_BUCKET, 100L, null, Duration.ofMinutes(1));

	@Test
	void planOverridesCapacityAndRefillsItsOwnCapacityUnlessItSaysOtherwise() {
		LimitDefinition api = resolver(API, Map.of("pro", settings(null, 1_000L, null, null), "enterprise",
				settings(null, 10_000L, 5_000L, null), "slow", settings(null, null, 10L, Duration.ofHours(1))))
			.resolve("api", LimitSettings.EMPTY, "@RateLimited on Api.call()");
		assertThat(api.limit()).isEqualTo(new RateLimit("api", Algorithm.TOKEN_BUCKET, 100, 100, Duration.ofMinutes(1)));
		assertThat(api.plans()).containsOnlyKeys("pro", "enterprise", "slow");
		assertThat(api.limitFor("pro"))
			.isEqualTo(new RateLimit("api", Algorithm.TOKEN_BUCKET, 1_000, 1_000, Duration.ofMinutes(1)));
		assertThat(api.limitFor("Enterprise"))
			.isEqualTo(new RateLimit("api", Algorithm.TOKEN_BUCKET, 10_000, 5_000, Duration.ofMinutes(1)));
		assertThat(api.limitFor("slow"))
			.isEqualTo(new RateLimit("api", Algorithm.TOKEN_BUCKET, 100, 10, Duration.ofHours(1)));
		assertThat(api.limitFor(null)).isSameAs(api.limit());
		assertThat(api.limitFor("unknown")).isSameAs(api.limit());
	}

	@Test
	void plansKeepTheFailModeAndShadowOfThePolicyAndNeedThePrincipal() {
		LimitSettings closed = LimitSettings.builder()
			.capacity(5L)
			.key(List.of(KeySource.IP))
			.failMode(FailMode.CLOSED)
			.shadow(true)
			.build();
		LimitDefinition search = resolver(closed, Map.of("pro", settings(null, 50L, null, null))).resolve("api",
				LimitSettings.EMPTY, "ratelimit.routes[0]");
		assertThat(search.limitFor("pro").failMode()).isEqualTo(FailMode.CLOSED);
		assertThat(search.limitFor("pro").shadow()).isTrue();
		assertThat(search.needsPrincipal()).isTrue();
		assertThat(resolver(closed, Map.of()).resolve("api", LimitSettings.EMPTY, "x").needsPrincipal()).isFalse();
	}

	@Test
	void planRepeatingThePolicysAlgorithmIsAccepted() {
		LimitDefinition api = resolver(API, Map.of("pro", settings(Algorithm.TOKEN_BUCKET, 1_000L, null, null)))
			.resolve("api", LimitSettings.EMPTY, "x");
		assertThat(api.limitFor("pro").capacity()).isEqualTo(1_000);
	}

	@Test
	void planCannotChangeTheAlgorithm() {
		assertInvalid(Map.of("pro", settings(Algorithm.FIXED_WINDOW, 1_000L, null, null)),
				"ratelimit.policies.api.plans.pro.algorithm", "cannot change the algorithm");
	}

	@Test
	void planOfAWindowCounterCannotChangeThePeriod() {
		LimitSettings window = settings(Algorithm.SLIDING_WINDOW_COUNTER, 100L, null, Duration.ofMinutes(1));
		assertThatExceptionOfType(RateLimitConfigurationException.class)
			.isThrownBy(() -> resolver(window, Map.of("pro", settings(null, null, null, Duration.ofHours(1))))
				.validatePolicy("api"))
			.satisfies((ex) -> assertThat(ex.getOrigin()).isEqualTo("ratelimit.policies.api.plans.pro.period"));
	}

	@Test
	void planMustAdmitTheCost() {
		LimitSettings costly = LimitSettings.builder().capacity(100L).cost(20L).build();
		assertThatExceptionOfType(RateLimitConfigurationException.class)
			.isThrownBy(() -> resolver(costly, Map.of("mini", settings(null, 10L, null, null))).validatePolicy("api"))
			.satisfies((ex) -> {
				assertThat(ex.getOrigin()).isEqualTo("ratelimit.policies.api.plans.mini.capacity");
				assertThat(ex.getReason()).isEqualTo("cost 20 can never be admitted by capacity 10");
			});
	}

	@Test
	void planCapacityMustBePositive() {
		assertInvalid(Map.of("pro", settings(null, 0L, null, null)), "ratelimit.policies.api.plans.pro.capacity",
				"capacity must be positive: 0");
	}

	@Test
	void planNamesDifferingOnlyInCaseAreRejected() {
		Map<String, LimitSettings> plans = new java.util.LinkedHashMap<>();
		plans.put("pro", settings(null, 1_000L, null, null));
		plans.put("PRO", settings(null, 2_000L, null, null));
		assertInvalid(plans, "ratelimit.policies.api.plans.PRO", "defined twice");
	}

	private static void assertInvalid(Map<String, LimitSettings> plans, String origin, String reason) {
		assertThatExceptionOfType(RateLimitConfigurationException.class)
			.isThrownBy(() -> resolver(API, plans).validatePolicy("api"))
			.satisfies((ex) -> {
				assertThat(ex.getOrigin()).isEqualTo(origin);
				assertThat(ex.getReason()).contains(reason);
			});
	}

	private static LimitResolver resolver(LimitSettings api, Map<String, LimitSettings> plans) {
		return LimitResolver.builder()
			.policies(Map.of("api", api))
			.defaultKey(List.of(KeySource.PRINCIPAL))
			.plans(Map.of("api", plans))
			.build();
	}

	private static LimitSettings settings(Algorithm algorithm, Long capacity, Long refill, Duration period) {
		return LimitSettings.builder()
			.algorithm(algorithm)
			.capacity(capacity)
			.refillTokens(refill)
			.period(period)
			.build();
	}

}
