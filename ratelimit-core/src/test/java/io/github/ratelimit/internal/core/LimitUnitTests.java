package io.github.ratelimit.internal.core;

import java.time.Duration;
import java.util.Map;

import org.junit.jupiter.api.Test;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.RateLimitConfigurationException;
import io.github.ratelimit.store.RateLimit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/**
 * What a limit's quota counts: layered like every other setting, checked against the
 * draft's token syntax and the algorithm, and one per limit name.
 */
class LimitUnitTests {

	private static final String ANNOTATED = "@RateLimited on com.example.Chat.complete(String)";

	private final LimitResolver resolver = LimitResolver.builder()
		.policies(Map.of("chat-tokens", LimitSettings.builder().capacity(100_000L).unit("tokens").build(), "uploads",
				LimitSettings.builder().capacity(1_000_000L).unit("content-bytes").build()))
		.build();

	@Test
	void aLimitCountsRequestsOrCallsInFlightUnlessItSaysOtherwise() {
		assertThat(this.resolver.resolve("chat", LimitSettings.builder().capacity(60L).build(), ANNOTATED).unit())
			.isEqualTo(LimitDefinition.REQUESTS);
		LimitSettings exports = LimitSettings.builder().algorithm(Algorithm.CONCURRENCY).capacity(2L).build();
		assertThat(this.resolver.resolve("exports", exports, ANNOTATED).unit())
			.isEqualTo(LimitDefinition.CONCURRENT_REQUESTS);
		assertThat(this.resolver.unitOf("chat")).isEqualTo("requests");
		assertThat(this.resolver.unitOf("exports")).isEqualTo("concurrent-requests");
		assertThat(this.resolver.unitOf("never-resolved")).isNull();
	}

	@Test
	void aPolicyGivesTheUnitOfItsAnnotationsAndARouteOverridesItsPolicy() {
		LimitDefinition annotated = this.resolver.resolve("chat-tokens",
				LimitSettings.builder().cost(500L).unit("words").build(), ANNOTATED);
		assertThat(annotated.unit()).isEqualTo("tokens");
		assertThat(annotated.cost()).isEqualTo(500);
		assertThat(this.resolver.unitOf("chat-tokens")).isEqualTo("tokens");
		LimitDefinition routed = this.resolver.resolveRoute("uploads", LimitSettings.builder().unit("kibibytes").build(),
				"ratelimit.routes[0]");
		assertThat(routed.unit()).isEqualTo("kibibytes");
		assertThat(this.resolver.resolvedLimits().get(1).sources()).containsEntry("unit", "ratelimit.routes[0].unit");
	}

	@Test
	void placesOfOneLimitMustCountTheSameThing() {
		this.resolver.resolve("budget", LimitSettings.builder().capacity(1_000L).unit("tokens").build(), ANNOTATED);
		assertThatExceptionOfType(RateLimitConfigurationException.class)
			.isThrownBy(() -> this.resolver.resolve("budget", LimitSettings.builder().capacity(1_000L).build(),
					"@RateLimited on com.example.Chat.stream(String)"))
			.satisfies((ex) -> assertThat(ex.getReason()).contains("counting tokens", "counting requests"))
			.satisfies((ex) -> assertThat(ex.getAction()).contains("ratelimit.policies.budget.unit"));
	}

	@Test
	void aDefinitionBuiltWithoutTheResolverChecksItsUnitToo() {
		RateLimit chat = RateLimit.of("chat", Algorithm.TOKEN_BUCKET, 100, Duration.ofMinutes(1));
		RateLimit exports = RateLimit.of("exports", Algorithm.CONCURRENCY, 2, Duration.ofMinutes(1));
		assertThat(LimitDefinition.builder(chat).unit("tokens").build().unit()).isEqualTo("tokens");
		assertThatIllegalArgumentException().isThrownBy(() -> LimitDefinition.builder(chat).unit("Tokens").build())
			.withMessageContaining("unit must be a lowercase token");
		assertThatIllegalArgumentException()
			.isThrownBy(() -> LimitDefinition.builder(chat).unit("concurrent-requests").build())
			.withMessageContaining("only a concurrency limit counts concurrent-requests");
		assertThatIllegalArgumentException().isThrownBy(() -> LimitDefinition.builder(exports).unit("tokens").build())
			.withMessageContaining("a concurrency limit counts concurrent-requests");
	}

}
