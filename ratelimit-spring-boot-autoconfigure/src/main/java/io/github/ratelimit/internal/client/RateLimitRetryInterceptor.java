package io.github.ratelimit.internal.client;

import java.io.IOException;
import java.util.concurrent.ThreadLocalRandom;
import java.util.random.RandomGenerator;

import org.springframework.core.retry.RetryException;
import org.springframework.core.retry.RetryPolicy;
import org.springframework.core.retry.RetryTemplate;
import org.springframework.core.retry.Retryable;
import org.springframework.http.HttpRequest;
import org.springframework.http.client.ClientHttpRequestExecution;
import org.springframework.http.client.ClientHttpRequestInterceptor;
import org.springframework.http.client.ClientHttpResponse;

import io.github.ratelimit.internal.core.RateLimitClock;

/**
 * Retries calls that a rate-limited server refuses with {@code 429} or {@code 503}. Waits
 * as long as the response asks ({@code Retry-After}, or the {@code t} of the exhausted
 * policies in {@code RateLimit}), otherwise an exponential back-off with full jitter;
 * stops at the attempt bound, at the time budget, at a server delay beyond the maximum
 * delay, or when interrupted, and then returns the last response as it came. Only the
 * configured methods are retried, the idempotent ones by default.
 * <p>
 * Add it to any {@code RestClient.Builder} ({@code requestInterceptor}) or
 * {@code RestTemplate} ({@code getInterceptors()}); those buffer the request body, so a
 * retry sends the same bytes again. Each retry runs the interceptors added after this one
 * again. Built on Spring Framework's {@link RetryTemplate}. Thread-safe.
 */
public final class RateLimitRetryInterceptor implements ClientHttpRequestInterceptor {

	private final RetrySettings settings;

	private final RetrySources sources;

	/**
	 * Creates an interceptor on the system clock that really waits.
	 * @param settings how to retry
	 */
	public RateLimitRetryInterceptor(RetrySettings settings) {
		this(settings, RateLimitClock.system(), RetrySleeper.system(), () -> ThreadLocalRandom.current().nextLong());
	}

	/**
	 * Creates an interceptor with its sources of time and randomness.
	 * @param settings how to retry
	 * @param clock measures the time budget and dates {@code Retry-After} without a
	 * {@code Date} header
	 * @param sleeper waits between attempts
	 * @param random draws the jittered back-off
	 */
	public RateLimitRetryInterceptor(RetrySettings settings, RateLimitClock clock, RetrySleeper sleeper,
			RandomGenerator random) {
		this.settings = settings;
		this.sources = new RetrySources(clock, sleeper, random);
	}

	/**
	 * How this interceptor retries.
	 * @return the settings
	 */
	public RetrySettings getSettings() {
		return this.settings;
	}

	@Override
	public ClientHttpResponse intercept(HttpRequest request, byte[] body, ClientHttpRequestExecution execution)
			throws IOException {
		if (!this.settings.methods().contains(request.getMethod())) {
			return execution.execute(request, body);
		}
		RetryAttempts attempts = new RetryAttempts(request, this.settings, this.sources);
		RetryTemplate template = new RetryTemplate(
				RetryPolicy.builder().includes(RetryableResponse.class).backOff(attempts).build());
		try {
			return template.execute(new Retryable<>() {

				@Override
				public ClientHttpResponse execute() throws IOException, RetryableResponse {
					return attempts.check(execution.execute(request, body));
				}

				@Override
				public String getName() {
					return attempts.describe();
				}

			});
		}
		catch (RetryException ex) {
			return attempts.outcome(ex);
		}
	}

}
