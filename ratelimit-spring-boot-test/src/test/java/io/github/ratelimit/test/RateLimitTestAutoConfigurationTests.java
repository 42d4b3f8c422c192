package io.github.ratelimit.test;

import java.time.Duration;
import java.util.List;

import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.autoconfigure.RateLimitAutoConfiguration;
import io.github.ratelimit.internal.core.RateLimitClock;
import io.github.ratelimit.internal.core.RateLimiter;
import io.github.ratelimit.store.Acquisition;
import io.github.ratelimit.store.RateLimit;
import io.github.ratelimit.store.RateLimitResult;
import io.github.ratelimit.store.RateLimitStore;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

class RateLimitTestAutoConfigurationTests {

	private static final RateLimit LIMIT = RateLimit.of("orders", Algorithm.FIXED_WINDOW, 1, Duration.ofMinutes(1));

	private final ApplicationContextRunner runner = new ApplicationContextRunner().withConfiguration(
			AutoConfigurations.of(RateLimitAutoConfiguration.class, RateLimitTestAutoConfiguration.class));

	@Test
	void theLimiterDecidesOnTheTestClockAndTellsTheRecorder() {
		this.runner.run((context) -> {
			assertThat(context).getBean(RateLimitClock.class).isInstanceOf(TestRateLimitClock.class);
			RateLimiter limiter = context.getBean(RateLimiter.class);
			RateLimitResult result = limiter.acquire(List.of(new Acquisition(LIMIT, "user:alice", 1)));
			assertThat(result.timestampMicros()).isEqualTo(context.getBean(TestRateLimitClock.class).nowMicros());
			assertThat(context.getBean(RateLimitDecisions.class)).hasAllowed("orders", "user:alice");
		});
	}

	@Test
	void resetForgetsBucketsRewindsTheClockAndClearsTheRecorder() {
		this.runner.run((context) -> {
			RateLimiter limiter = context.getBean(RateLimiter.class);
			TestRateLimitClock clock = context.getBean(TestRateLimitClock.class);
			List<Acquisition> request = List.of(new Acquisition(LIMIT, "user:alice", 1));
			assertThat(limiter.acquire(request).allowed()).isTrue();
			clock.advance(Duration.ofSeconds(30));
			assertThat(limiter.acquire(request).allowed()).isFalse();
			context.getBean(RateLimitTestReset.class).reset();
			assertThat(clock.instant()).isEqualTo(TestRateLimitClock.DEFAULT_START);
			assertThat(context.getBean(RateLimitDecisions.class).all()).isEmpty();
			assertThat(limiter.acquire(request).allowed()).isTrue();
		});
	}

	@Test
	void backsOffWhenTheApplicationHasAClockOfItsOwn() {
		this.runner.withUserConfiguration(SystemClockConfiguration.class).run((context) -> {
			assertThat(context).doesNotHaveBean(TestRateLimitClock.class);
			assertThat(context).getBean(RateLimitClock.class).isSameAs(SystemClockConfiguration.CLOCK);
			context.getBean(RateLimitTestReset.class).reset();
		});
	}

	@Test
	void resetNamesAStoreThatCannotForgetItsBuckets() {
		this.runner.withUserConfiguration(StoreWithoutResetConfiguration.class).run((context) -> {
			assertThatIllegalStateException().isThrownBy(() -> context.getBean(RateLimitTestReset.class).reset())
				.withMessage("Rate limit store 'counting' cannot forget its buckets between tests: implement "
						+ "RateLimitStore.resetAll() in " + StoreWithoutReset.class.getName());
		});
	}

	@Test
	void resetsNothingWhenRateLimitingIsSwitchedOff() {
		this.runner.withPropertyValues("ratelimit.enabled=false").run((context) -> {
			assertThat(context).doesNotHaveBean(RateLimiter.class);
			context.getBean(TestRateLimitClock.class).advance(Duration.ofSeconds(1));
			context.getBean(RateLimitTestReset.class).reset();
			assertThat(context.getBean(TestRateLimitClock.class).instant()).isEqualTo(TestRateLimitClock.DEFAULT_START);
		});
	}

	@Configuration(proxyBeanMethods = false)
	static class SystemClockConfiguration {

		static final RateLimitClock CLOCK = RateLimitClock.system();

		@Bean
		RateLimitClock systemClock() {
			return CLOCK;
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class StoreWithoutResetConfiguration {

		@Bean
		RateLimitStore countingStore() {
			return new StoreWithoutReset();
		}

	}

	static final class StoreWithoutReset implements RateLimitStore {

		@Override
		public RateLimitResult tryAcquire(List<Acquisition> acquisitions, long maxDelayMicros) {
			throw new UnsupportedOperationException();
		}

		@Override
		public void refund(List<Acquisition> acquisitions, RateLimitResult decided) {
		}

		@Override
		public String name() {
			return "counting";
		}

	}

}
