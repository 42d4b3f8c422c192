package io.github.ratelimit.autoconfigure;

import java.time.Duration;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.regex.Pattern;

import org.springframework.http.HttpMethod;

import io.github.ratelimit.RateLimitConfigurationException;
import io.github.ratelimit.internal.client.RetrySettings;

/**
 * Turns {@code ratelimit.client.retry} into validated {@link RetrySettings}, reporting a
 * bad value as a {@link RateLimitConfigurationException} that names its property.
 */
final class ClientRetryPropertiesMapper {

	private static final String PREFIX = "ratelimit.client.retry.";

	/** Registered methods are upper-case letters and hyphens (VERSION-CONTROL). */
	private static final Pattern METHOD = Pattern.compile("[A-Z][A-Z-]*");

	private ClientRetryPropertiesMapper() {
	}

	static RetrySettings settings(RateLimitClientProperties.Retry retry) {
		if (retry.getMaxAttempts() < 1) {
			throw invalid("max-attempts", "must be at least 1: " + retry.getMaxAttempts(),
					"Use a small count such as 3; 1 never retries");
		}
		requirePositive("max-total-time", retry.getMaxTotalTime(), "Use a budget such as 30s");
		requirePositive("initial-delay", retry.getInitialDelay(), "Use a short delay such as 100ms");
		requirePositive("max-delay", retry.getMaxDelay(), "Use a delay such as 10s");
		if (retry.getMaxDelay().compareTo(retry.getInitialDelay()) < 0) {
			throw invalid("max-delay",
					"is shorter than " + PREFIX + "initial-delay: " + retry.getMaxDelay() + " < "
							+ retry.getInitialDelay(),
					"Raise max-delay to at least initial-delay");
		}
		if (!(retry.getMultiplier() >= 1)) {
			throw invalid("multiplier", "must be at least 1: " + retry.getMultiplier(),
					"Use 1 for a constant cap or 2 to double it on every retry");
		}
		return new RetrySettings(retry.getMaxAttempts(), retry.getMaxTotalTime(), retry.getInitialDelay(),
				retry.getMaxDelay(), retry.getMultiplier(), methods(retry.getMethods()), statuses(retry.getStatuses()));
	}

	private static Set<HttpMethod> methods(List<String> names) {
		if (names == null || names.isEmpty()) {
			throw invalid("methods", "must not be empty", "List the methods to retry, such as GET, PUT, DELETE");
		}
		Set<HttpMethod> methods = new LinkedHashSet<>();
		for (int i = 0; i < names.size(); i++) {
			String name = (names.get(i) != null) ? names.get(i).trim().toUpperCase(Locale.ROOT) : "";
			if (!METHOD.matcher(name).matches()) {
				throw invalid("methods[" + i + "]", "'" + names.get(i) + "' is not an HTTP method",
						"Use method names such as GET or PUT");
			}
			methods.add(HttpMethod.valueOf(name));
		}
		return methods;
	}

	private static Set<Integer> statuses(List<Integer> statuses) {
		if (statuses == null || statuses.isEmpty()) {
			throw invalid("statuses", "must not be empty", "List the statuses to retry, such as 429, 503");
		}
		for (int i = 0; i < statuses.size(); i++) {
			Integer status = statuses.get(i);
			if (status == null || status < 400 || status > 599) {
				throw invalid("statuses[" + i + "]", "must be an error status from 400 to 599: " + status,
						"Use statuses that mean 'try again later', such as 429 or 503");
			}
		}
		return new LinkedHashSet<>(statuses);
	}

	private static void requirePositive(String property, Duration value, String action) {
		if (value == null || value.isNegative() || value.isZero()) {
			throw invalid(property, "must be positive: " + value, action);
		}
	}

	private static RateLimitConfigurationException invalid(String property, String reason, String action) {
		return new RateLimitConfigurationException(PREFIX + property, reason, action);
	}

}
