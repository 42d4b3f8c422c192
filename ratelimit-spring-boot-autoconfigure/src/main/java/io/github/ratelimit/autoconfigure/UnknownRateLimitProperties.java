package io.github.ratelimit.autoconfigure;

import java.util.LinkedHashSet;
import java.util.Set;

import org.springframework.boot.context.properties.bind.UnboundConfigurationPropertiesException;
import org.springframework.boot.context.properties.source.ConfigurationProperty;
import org.springframework.boot.context.properties.source.ConfigurationPropertySource;
import org.springframework.boot.context.properties.source.ConfigurationPropertySources;
import org.springframework.boot.context.properties.source.IterableConfigurationPropertySource;
import org.springframework.core.env.Environment;
import org.springframework.core.env.PropertySource;
import org.springframework.core.env.StandardEnvironment;

/**
 * Fails the startup when a name under {@code ratelimit} names no property, a misspelling
 * most of the time, so that a typo does not leave a limit at its default.
 * <p>
 * Names are checked against what {@link RateLimitProperties} can bind, not against what
 * one binding used: Spring Boot binds a list from the source of highest precedence alone,
 * so a test or profile that redefines {@code ratelimit.routes} leaves the application's
 * own route entries unbound, and those are not typos. As in Spring Boot, environment
 * variables and system properties are not checked: they hold names of other programs too.
 */
final class UnknownRateLimitProperties {

	private UnknownRateLimitProperties() {
	}

	/**
	 * Checks every name under {@code ratelimit} in the environment's property sources.
	 * @param environment the application's environment
	 * @throws UnboundConfigurationPropertiesException naming the unknown properties
	 */
	static void check(Environment environment) {
		Set<ConfigurationProperty> unknown = new LinkedHashSet<>();
		for (ConfigurationPropertySource source : ConfigurationPropertySources.get(environment)) {
			if (source instanceof IterableConfigurationPropertySource iterable && !isSystemSource(source)) {
				iterable.filter(RateLimitPropertyNames.PREFIX::isAncestorOf)
					.stream()
					.filter((name) -> !RateLimitPropertyNames.isKnown(name))
					.map(source::getConfigurationProperty)
					.forEach(unknown::add);
			}
		}
		if (!unknown.isEmpty()) {
			throw new UnboundConfigurationPropertiesException(unknown);
		}
	}

	private static boolean isSystemSource(ConfigurationPropertySource source) {
		if (source.getUnderlyingSource() instanceof PropertySource<?> propertySource) {
			String name = propertySource.getName();
			return StandardEnvironment.SYSTEM_ENVIRONMENT_PROPERTY_SOURCE_NAME.equals(name)
					|| StandardEnvironment.SYSTEM_PROPERTIES_PROPERTY_SOURCE_NAME.equals(name);
		}
		return false;
	}

}
