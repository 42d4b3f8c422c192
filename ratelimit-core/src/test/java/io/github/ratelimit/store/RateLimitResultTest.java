package io.github.ratelimit.store;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.store.RateLimit;
import io.github.ratelimit.store.RateLimitDecision;
import io.github.ratelimit.store.RateLimitResult;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

class RateLimitResultTest {

	private static final RateLimit LIMIT = RateLimit.of("orders", Algorithm.LEAKY_BUCKET, 5, Duration.ofSeconds(1));

	@Test
	void isAllowedWhenEveryLimitAllows() {
		RateLimitResult result = new RateLimitResult(
				List.of(RateLimitDecision.allowed(LIMIT, 3, 10, 0), RateLimitDecision.allowed(LIMIT, 1, 10, 0)), 42);
		assertThat(result.allowed()).isTrue();
		assertThat(result.rejections()).isEmpty();
		assertThat(result.timestampMicros()).isEqualTo(42);
	}

	@Test
	void isRejectedWhenAnyLimitRejects() {
		RateLimitDecision rejection = RateLimitDecision.rejected(LIMIT, 0, 5, 7);
		RateLimitResult result = new RateLimitResult(List.of(RateLimitDecision.allowed(LIMIT, 3, 10, 0), rejection),
				42);
		assertThat(result.allowed()).isFalse();
		assertThat(result.rejections()).containsExactly(rejection);
	}

	@Test
	void delaysByTheLongestLeakyBucketWait() {
		RateLimitResult result = new RateLimitResult(
				List.of(RateLimitDecision.allowed(LIMIT, 3, 10, 200), RateLimitDecision.allowed(LIMIT, 1, 10, 300),
						RateLimitDecision.allowed(LIMIT, 1, 10, 0)),
				42);
		assertThat(result.delayMicros()).isEqualTo(300);
	}

	@Test
	void keepsItsOwnCopyOfTheDecisions() {
		List<RateLimitDecision> decisions = new ArrayList<>(List.of(RateLimitDecision.allowed(LIMIT, 3, 10, 0)));
		RateLimitResult result = new RateLimitResult(decisions, 42);
		decisions.add(RateLimitDecision.rejected(LIMIT, 0, 5, 7));
		assertThat(result.decisions()).hasSize(1);
		assertThat(result.allowed()).isTrue();
	}

	@Test
	void decisionRejectsNegativeRemaining() {
		assertThatIllegalArgumentException().isThrownBy(() -> RateLimitDecision.allowed(LIMIT, -1, 10, 0))
			.withMessage("remaining must not be negative: -1");
	}

	@Test
	void decisionRejectsNegativeTimes() {
		assertThatIllegalArgumentException().isThrownBy(() -> RateLimitDecision.allowed(LIMIT, 1, -10, 0))
			.withMessage("times must not be negative");
		assertThatIllegalArgumentException().isThrownBy(() -> RateLimitDecision.allowed(LIMIT, 1, 10, -1))
			.withMessage("times must not be negative");
	}

	@Test
	void rejectionNeedsAPositiveRetryAfter() {
		assertThatIllegalArgumentException().isThrownBy(() -> RateLimitDecision.rejected(LIMIT, 0, 0, 0))
			.withMessage("a rejection needs a positive retry-after");
	}

	@Test
	void allowedDecisionHasNoRetryAfter() {
		RateLimitDecision decision = RateLimitDecision.allowed(LIMIT, 2, 10, 5);
		assertThat(decision.allowed()).isTrue();
		assertThat(decision.retryAfterMicros()).isZero();
		assertThat(decision.delayMicros()).isEqualTo(5);
	}

	@Test
	void rejectedDecisionIsNeverDelayed() {
		RateLimitDecision decision = RateLimitDecision.rejected(LIMIT, 2, 5, 7);
		assertThat(decision.allowed()).isFalse();
		assertThat(decision.resetMicros()).isEqualTo(5);
		assertThat(decision.retryAfterMicros()).isEqualTo(7);
		assertThat(decision.delayMicros()).isZero();
	}

}
