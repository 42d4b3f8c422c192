package io.github.ratelimit.autoconfigure;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.boot.actuate.autoconfigure.endpoint.PropertiesEndpointAccessResolver;
import org.springframework.boot.actuate.endpoint.Access;
import org.springframework.boot.actuate.endpoint.EndpointId;
import org.springframework.core.env.PropertyResolver;

import io.github.ratelimit.internal.actuate.RateLimitsEndpoint;

/**
 * Warns at startup that the {@code ratelimits} endpoint resets buckets over HTTP while no
 * Spring Security is on the class path to guard it: anyone who reaches the application
 * could give any caller a fresh quota. Registered only in that case; the warning names the
 * ways out (secure it, make it read-only, or stop exposing it).
 */
final class RateLimitsEndpointResetWarning implements SmartInitializingSingleton {

	private static final String MESSAGE = "The 'ratelimits' actuator endpoint is exposed over HTTP with its reset "
			+ "(DELETE) operation, and Spring Security is not on the class path: anyone who can reach it can reset "
			+ "any caller's rate limits. Secure the endpoint, set management.endpoint.ratelimits.access=read-only, "
			+ "or remove it from management.endpoints.web.exposure.include";

	private static final EndpointId ENDPOINT = EndpointId.of("ratelimits");

	private static final Log logger = LogFactory.getLog(RateLimitsEndpoint.class);

	private final PropertyResolver properties;

	RateLimitsEndpointResetWarning(PropertyResolver properties) {
		this.properties = properties;
	}

	@Override
	public void afterSingletonsInstantiated() {
		if (resetAllowed()) {
			logger.warn(MESSAGE);
		}
	}

	/** Whether the endpoint's access lets its write operations run, as the actuator decides it. */
	private boolean resetAllowed() {
		Access access = new PropertiesEndpointAccessResolver(this.properties)
			.accessFor(ENDPOINT, Access.UNRESTRICTED);
		return access == Access.UNRESTRICTED;
	}

}
