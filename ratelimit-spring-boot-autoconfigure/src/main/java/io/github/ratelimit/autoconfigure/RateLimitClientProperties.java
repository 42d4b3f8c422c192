package io.github.ratelimit.autoconfigure;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * Configuration properties for calls this application makes to rate-limited APIs, used by
 * {@link RateLimitClientAutoConfiguration} independently of {@code ratelimit.enabled}.
 */
@ConfigurationProperties("ratelimit.client")
public class RateLimitClientProperties {

	private final Retry retry = new Retry();

	public Retry getRetry() {
		return this.retry;
	}

	/**
	 * Retries of refused calls by the auto-configured RestClient.Builder and RestTemplateBuilder.
	 */
	public static class Retry {

		/**
		 * Whether RestClient.Builder and RestTemplateBuilder beans retry calls refused with a retryable status.
		 */
		private boolean enabled;

		/**
		 * Attempts in total for one call, the first one included.
		 */
		private int maxAttempts = 3;

		/**
		 * Time budget of one call from its first attempt; a wait that would end beyond it is not started.
		 */
		private Duration maxTotalTime = Duration.ofSeconds(30);

		/**
		 * Cap of the first jittered back-off, used when the response names no delay.
		 */
		private Duration initialDelay = Duration.ofMillis(100);

		/**
		 * Cap of every back-off; a longer delay demanded by the server ends the call with its response.
		 */
		private Duration maxDelay = Duration.ofSeconds(10);

		/**
		 * Growth of the back-off cap from one retry to the next.
		 */
		private double multiplier = 2.0;

		/**
		 * Request methods that are retried; add POST or PATCH only for endpoints that are idempotent.
		 */
		private List<String> methods = new ArrayList<>(List.of("GET", "HEAD", "OPTIONS", "PUT", "DELETE", "TRACE"));

		/**
		 * Response statuses that are retried.
		 */
		private List<Integer> statuses = new ArrayList<>(List.of(429, 503));

		public boolean isEnabled() {
			return this.enabled;
		}

		public void setEnabled(boolean enabled) {
			this.enabled = enabled;
		}

		public int getMaxAttempts() {
			return this.maxAttempts;
		}

		public void setMaxAttempts(int maxAttempts) {
			this.maxAttempts = maxAttempts;
		}

		public Duration getMaxTotalTime() {
			return this.maxTotalTime;
		}

		public void setMaxTotalTime(Duration maxTotalTime) {
			this.maxTotalTime = maxTotalTime;
		}

		public Duration getInitialDelay() {
			return this.initialDelay;
		}

		public void setInitialDelay(Duration initialDelay) {
			this.initialDelay = initialDelay;
		}

		public Duration getMaxDelay() {
			return this.maxDelay;
		}

		public void setMaxDelay(Duration maxDelay) {
			this.maxDelay = maxDelay;
		}

		public double getMultiplier() {
			return this.multiplier;
		}

		public void setMultiplier(double multiplier) {
			this.multiplier = multiplier;
		}

		public List<String> getMethods() {
			return this.methods;
		}

		public void setMethods(List<String> methods) {
			this.methods = methods;
		}

		public List<Integer> getStatuses() {
			return this.statuses;
		}

		public void setStatuses(List<Integer> statuses) {
			this.statuses = statuses;
		}

	}

}
