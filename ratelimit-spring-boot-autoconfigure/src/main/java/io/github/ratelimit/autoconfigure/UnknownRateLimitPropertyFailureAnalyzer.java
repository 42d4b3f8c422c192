package io.github.ratelimit.autoconfigure;

import java.util.List;

import org.springframework.boot.context.properties.bind.UnboundConfigurationPropertiesException;
import org.springframework.boot.context.properties.source.ConfigurationProperty;
import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.core.Ordered;

/**
 * Reports properties under {@code ratelimit} that bind to nothing, a misspelling most of
 * the time, with the nearest known property. Ordered before Spring Boot's own analyzer of
 * unbound properties, which names them without a suggestion.
 */
class UnknownRateLimitPropertyFailureAnalyzer extends AbstractFailureAnalyzer<UnboundConfigurationPropertiesException>
		implements Ordered {

	@Override
	public int getOrder() {
		return Ordered.HIGHEST_PRECEDENCE;
	}

	@Override
	protected FailureAnalysis analyze(Throwable rootFailure, UnboundConfigurationPropertiesException cause) {
		List<ConfigurationProperty> unknown = cause.getUnboundProperties()
			.stream()
			.filter((property) -> RateLimitPropertyNames.PREFIX.isAncestorOf(property.getName()))
			.toList();
		if (unknown.isEmpty()) {
			return null;
		}
		StringBuilder description = new StringBuilder("Invalid rate limit configuration:");
		for (ConfigurationProperty property : unknown) {
			description.append(System.lineSeparator())
				.append("    ")
				.append(RateLimitPropertyNames.describeUnknown(property.getName()));
			if (property.getOrigin() != null) {
				description.append(" (from ").append(property.getOrigin()).append(')');
			}
		}
		return new FailureAnalysis(description.toString(),
				"Correct or remove the property; docs/configuration.md lists every ratelimit property", cause);
	}

}
