package io.github.ratelimit.test;

import org.springframework.context.ApplicationContext;
import org.springframework.core.Ordered;
import org.springframework.test.context.TestContext;
import org.springframework.test.context.TestExecutionListener;

/**
 * Resets rate limiting before every test method of a context prepared by
 * {@link AutoConfigureRateLimitTest}: forgets every bucket, moves the
 * {@link TestRateLimitClock} back to its start and clears the {@link RateLimitDecisions}.
 * It runs before the test's own {@code @BeforeEach} methods, so quota those use stays
 * used. Registered in {@code META-INF/spring.factories}; contexts without the annotation
 * are left alone.
 */
public final class ResetRateLimitsTestExecutionListener implements TestExecutionListener, Ordered {

	@Override
	public int getOrder() {
		// after the listeners that prepare the context and inject the test instance
		return Ordered.LOWEST_PRECEDENCE - 100;
	}

	@Override
	public void beforeTestMethod(TestContext testContext) {
		if (!testContext.hasApplicationContext()) {
			return;
		}
		ApplicationContext context = testContext.getApplicationContext();
		context.getBeanProvider(RateLimitTestReset.class).ifAvailable(RateLimitTestReset::reset);
	}

}
