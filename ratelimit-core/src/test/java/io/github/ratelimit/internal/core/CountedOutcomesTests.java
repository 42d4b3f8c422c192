package io.github.ratelimit.internal.core;

import java.time.Duration;
import java.util.BitSet;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.RateLimitConfigurationException;
import io.github.ratelimit.store.RateLimit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/**
 * What the core does with the outcomes a limit counts: it carries them as written where
 * they were validated, layers them like any setting, gives back everything for a limit
 * holding permits in flight, and refuses outcomes on such a limit, naming the property.
 */
class CountedOutcomesTests {

	private static final CountedOutcomes UNAUTHORIZED = codes("401", 401);

	@Test
	void countsOnlyTheCodesItHolds() {
		assertThat(UNAUTHORIZED.counts(401)).isTrue();
		assertThat(UNAUTHORIZED.counts(200)).isFalse();
		assertThat(UNAUTHORIZED.counts(-1)).isFalse();
		assertThat(UNAUTHORIZED.countsAll()).isFalse();
		assertThat(CountedOutcomes.ALL.counts(200)).isTrue();
		assertThat(CountedOutcomes.ALL.countsAll()).isTrue();
		assertThat(CountedOutcomes.NONE.counts(401)).isFalse();
		assertThat(CountedOutcomes.NONE.countsAll()).isFalse();
		assertThat(UNAUTHORIZED.values()).containsExactly("401");
	}

	@Test
	void refusesCodesOutOfRange() {
		BitSet codes = new BitSet();
		codes.set(1000);
		assertThatIllegalArgumentException().isThrownBy(() -> CountedOutcomes.of(codes, List.of("1000")))
			.withMessageContaining("below 1000");
	}

	@Test
	void isIndependentOfTheCodesItWasBuiltFrom() {
		BitSet codes = new BitSet();
		codes.set(401);
		CountedOutcomes outcomes = CountedOutcomes.of(codes, List.of("401"));
		codes.set(200);
		assertThat(outcomes.counts(200)).isFalse();
	}

	@Test
	void placeOverPolicyLayersTheOutcomesLikeAnyOtherSetting() {
		LimitResolver resolver = LimitResolver.builder()
			.policies(Map.of("logins", LimitSettings.builder().capacity(5L).countStatuses(UNAUTHORIZED).build()))
			.build();
		assertThat(resolver.resolve("logins", LimitSettings.EMPTY, "@RateLimited on A.b()").countStatuses())
			.isEqualTo(UNAUTHORIZED);
		CountedOutcomes forbidden = codes("403", 403);
		assertThat(resolver
			.resolveRoute("logins", LimitSettings.builder().countStatuses(forbidden).build(), "ratelimit.routes[0]")
			.countStatuses()).isEqualTo(forbidden);
		assertThat(LimitResolver.builder()
			.build()
			.resolve("plain", LimitSettings.builder().capacity(5L).build(), "x")
			.countStatuses()).isSameAs(CountedOutcomes.ALL);
	}

	@Test
	void aLimitHoldingPermitsInFlightGivesEverythingBack() {
		LimitDefinition exports = LimitResolver.builder()
			.build()
			.resolve("exports", LimitSettings.builder().algorithm(Algorithm.CONCURRENCY).capacity(2L).build(), "x");
		assertThat(exports.countStatuses()).isSameAs(CountedOutcomes.NONE);
	}

	@Test
	void aLimitHoldingPermitsInFlightCountsNoOutcomeNamingTheProperty() {
		LimitResolver resolver = LimitResolver.builder()
			.policies(Map.of("exports",
					LimitSettings.builder()
						.algorithm(Algorithm.CONCURRENCY)
						.capacity(2L)
						.countStatuses(codes("5xx", 500))
						.build()))
			.build();
		assertThatExceptionOfType(RateLimitConfigurationException.class)
			.isThrownBy(() -> resolver.validatePolicy("exports"))
			.withMessageContaining("ratelimit.policies.exports.count-statuses")
			.withMessageContaining("so no status counts: [5xx]");
		assertThatIllegalArgumentException()
			.isThrownBy(() -> LimitDefinition
				.builder(new RateLimit("exports", Algorithm.CONCURRENCY, 2, 2,
						Duration.ofSeconds(1)))
				.countStatuses(UNAUTHORIZED)
				.build())
			.withMessageContaining("a concurrency limit counts no outcome");
	}

	private static CountedOutcomes codes(String spelled, int code) {
		BitSet codes = new BitSet();
		codes.set(code);
		return CountedOutcomes.of(codes, List.of(spelled));
	}

}
