package io.github.ratelimit.test;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;

import io.github.ratelimit.internal.core.RateLimitClock;
import io.github.ratelimit.internal.core.RateLimiter;

/**
 * Auto-configuration imported by {@link AutoConfigureRateLimitTest}: a
 * {@link TestRateLimitClock}, ordered before the starter's so that the limits decide at
 * its time, a {@link RateLimitDecisions} recorder, and what resets them and the buckets
 * between tests.
 */
// by name: javadoc would otherwise read the starter's configuration and every annotation on it
@AutoConfiguration(beforeName = "io.github.ratelimit.autoconfigure.RateLimitAutoConfiguration")
public final class RateLimitTestAutoConfiguration {

	@Bean
	@ConditionalOnMissingBean(RateLimitClock.class)
	TestRateLimitClock testRateLimitClock() {
		return new TestRateLimitClock();
	}

	@Bean
	@ConditionalOnMissingBean
	RateLimitDecisions rateLimitDecisions() {
		return new RateLimitDecisions();
	}

	@Bean
	RateLimitTestReset rateLimitTestReset(ObjectProvider<RateLimiter> rateLimiter,
			ObjectProvider<RateLimitClock> clock, ObjectProvider<RateLimitDecisions> decisions) {
		return new RateLimitTestReset(rateLimiter, clock, decisions);
	}

}
