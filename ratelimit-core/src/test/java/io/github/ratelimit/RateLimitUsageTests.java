package io.github.ratelimit;

import java.time.Duration;
import java.util.List;

import org.junit.jupiter.api.Test;

import io.github.ratelimit.internal.core.LimitDefinition;
import io.github.ratelimit.internal.core.SettledCost;
import io.github.ratelimit.internal.core.UsageReports;
import io.github.ratelimit.store.Acquisition;
import io.github.ratelimit.store.RateLimit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/**
 * A call's usage keeps the last cost it reported, only while it is the current one of its
 * thread; outside limited calls reports go nowhere.
 */
class RateLimitUsageTests {

	@Test
	void outsideALimitedCallReportsGoNowhere() {
		RateLimitUsage usage = RateLimitUsage.current();
		assertThat(usage).isNotNull().isSameAs(RateLimitUsage.current());
		usage.report(12);
		assertThat(UsageReports.reported(usage)).isEqualTo(UsageReports.UNREPORTED);
	}

	@Test
	void keepsTheLastReport() {
		RateLimitUsage usage = UsageReports.open();
		assertThat(UsageReports.reported(usage)).isEqualTo(UsageReports.UNREPORTED);
		usage.report(40);
		usage.report(7);
		assertThat(UsageReports.reported(usage)).isEqualTo(7);
	}

	@Test
	void refusesANegativeCost() {
		assertThatIllegalArgumentException().isThrownBy(() -> UsageReports.open().report(-1))
			.withMessage("actual cost must not be negative: -1");
		assertThatIllegalArgumentException().isThrownBy(() -> RateLimitUsage.current().report(-1));
	}

	@Test
	void theInnermostBoundUsageIsCurrentUntilItsCallEnds() {
		RateLimitUsage outer = UsageReports.open();
		RateLimitUsage inner = UsageReports.open();
		RateLimitUsage none = UsageReports.bind(outer);
		try {
			RateLimitUsage previous = UsageReports.bind(inner);
			try {
				RateLimitUsage.current().report(3);
			}
			finally {
				UsageReports.bind(previous);
			}
			RateLimitUsage.current().report(5);
		}
		finally {
			UsageReports.bind(none);
		}
		assertThat(UsageReports.reported(inner)).isEqualTo(3);
		assertThat(UsageReports.reported(outer)).isEqualTo(5);
		assertThat(UsageReports.reported(RateLimitUsage.current())).isEqualTo(UsageReports.UNREPORTED);
	}

	@Test
	void anEstimateIsReservedWithinWhatADecisionCanTake() {
		RateLimit limit = new RateLimit("tokens", Algorithm.TOKEN_BUCKET, 100, 100, Duration.ofMinutes(1));
		LimitDefinition definition = LimitDefinition.builder(limit)
			.settledCost(new SettledCost("#maxTokens", null, null))
			.build();
		assertThat(definition.settles()).isTrue();
		assertThat(definition.acquisitions("alice", null, 40)).extracting(Acquisition::cost).containsExactly(40L);
		assertThat(definition.acquisitions("alice", null, 500)).extracting(Acquisition::cost).containsExactly(100L);
		assertThat(definition.acquisitions("alice", null, 0)).extracting(Acquisition::cost).containsExactly(1L);
	}

	@Test
	void aConcurrencyLimitCannotSettle() {
		RateLimit limit = new RateLimit("exports", Algorithm.CONCURRENCY, 2, 0, Duration.ofMinutes(1));
		assertThatIllegalArgumentException().isThrownBy(() -> LimitDefinition.builder(limit)
			.settledCost(new SettledCost(null, null, "X-Cost"))
			.build()).withMessageContaining("a concurrency limit has no cost to settle");
		assertThat(List.of(SettledCost.NONE.settles())).containsExactly(false);
	}

}
