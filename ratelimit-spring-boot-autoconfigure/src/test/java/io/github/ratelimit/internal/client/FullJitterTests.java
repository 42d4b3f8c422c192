package io.github.ratelimit.internal.client;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

import org.junit.jupiter.api.Test;

import org.springframework.http.HttpMethod;
import org.springframework.http.HttpStatus;
import org.springframework.http.client.ClientHttpRequestExecution;
import org.springframework.mock.http.client.MockClientHttpRequest;
import org.springframework.mock.http.client.MockClientHttpResponse;

import io.github.ratelimit.store.contract.MutableClock;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The back-off without a server delay: a uniform draw from zero to a cap that grows by the
 * multiplier per retry and stops at the maximum delay. Many calls on a seeded random,
 * without a network, to see the whole range.
 */
class FullJitterTests {

	private final MutableClock clock = new MutableClock();

	private final List<Duration> sleeps = new ArrayList<>();

	@Test
	void drawsEachDelayFromZeroToTheGrowingCap() throws Exception {
		RetrySettings settings = RetrySettings.defaults()
			.withMaxAttempts(7)
			.withMaxTotalTime(Duration.ofDays(1))
			.withBackOff(Duration.ofMillis(100), Duration.ofMillis(1000), 3.0);
		long[] caps = { 100, 300, 900, 1000, 1000, 1000 };
		long[] lowest = { Long.MAX_VALUE, Long.MAX_VALUE, Long.MAX_VALUE, Long.MAX_VALUE, Long.MAX_VALUE,
				Long.MAX_VALUE };
		long[] highest = new long[caps.length];
		RateLimitRetryInterceptor interceptor = new RateLimitRetryInterceptor(settings, this.clock,
				(delay) -> this.sleeps.add(delay), new Random(7));
		for (int call = 0; call < 300; call++) {
			this.sleeps.clear();
			int status = interceptor.intercept(new MockClientHttpRequest(HttpMethod.GET, "/x"), new byte[0],
					alwaysUnavailable())
				.getStatusCode()
				.value();
			assertThat(status).isEqualTo(503);
			assertThat(this.sleeps).hasSize(caps.length);
			for (int retry = 0; retry < caps.length; retry++) {
				long millis = this.sleeps.get(retry).toMillis();
				assertThat(millis).isBetween(0L, caps[retry]);
				lowest[retry] = Math.min(lowest[retry], millis);
				highest[retry] = Math.max(highest[retry], millis);
			}
		}
		for (int retry = 0; retry < caps.length; retry++) {
			// full jitter: the draws cover the range, not a band around the cap
			assertThat(lowest[retry]).isLessThanOrEqualTo(caps[retry] / 20);
			assertThat(highest[retry]).isGreaterThanOrEqualTo(caps[retry] * 19 / 20);
		}
	}

	private static ClientHttpRequestExecution alwaysUnavailable() {
		return (request, body) -> new MockClientHttpResponse(new byte[0], HttpStatus.SERVICE_UNAVAILABLE);
	}

}
