package io.github.ratelimit.autoconfigure;

import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

import io.github.ratelimit.RateLimitConfigurationException;

/**
 * Reports invalid rate limit configuration at startup: where the bad value is and how to
 * fix it.
 */
class RateLimitConfigurationFailureAnalyzer extends AbstractFailureAnalyzer<RateLimitConfigurationException> {

	@Override
	protected FailureAnalysis analyze(Throwable rootFailure, RateLimitConfigurationException cause) {
		return new FailureAnalysis("Invalid rate limit configuration at " + cause.getOrigin() + ": " + cause.getReason(),
				cause.getAction(), cause);
	}

}
