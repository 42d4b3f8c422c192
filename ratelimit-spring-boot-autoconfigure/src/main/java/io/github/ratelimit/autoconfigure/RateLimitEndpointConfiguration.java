package io.github.ratelimit.autoconfigure;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.actuate.autoconfigure.endpoint.condition.ConditionalOnAvailableEndpoint;
import org.springframework.boot.actuate.autoconfigure.endpoint.expose.EndpointExposure;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingClass;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;

import io.github.ratelimit.internal.actuate.OverloadStatus;
import io.github.ratelimit.internal.actuate.RateLimitsEndpoint;
import io.github.ratelimit.internal.actuate.RateLimitsEndpointWebExtension;
import io.github.ratelimit.internal.core.LimitResolver;
import io.github.ratelimit.internal.core.RateLimiter;
import io.github.ratelimit.internal.core.SettledCosts;
import io.github.ratelimit.store.RateLimitStore;

/**
 * The {@code ratelimits} actuator endpoint, when Spring Boot's actuator is on the
 * classpath and the application exposes the endpoint (over HTTP or JMX), and its HTTP
 * extension when it is exposed over HTTP. Without Spring Security on the class path, a
 * warning at startup says when anyone could reset limits over HTTP.
 */
@Configuration(proxyBeanMethods = false)
@ConditionalOnClass(name = { "org.springframework.boot.actuate.endpoint.annotation.Endpoint",
		"org.springframework.boot.actuate.autoconfigure.endpoint.condition.ConditionalOnAvailableEndpoint" })
class RateLimitEndpointConfiguration {

	@Bean
	@ConditionalOnMissingBean
	@ConditionalOnAvailableEndpoint(RateLimitsEndpoint.class)
	RateLimitsEndpoint rateLimitsEndpoint(LimitResolver rateLimitResolver, RateLimitStore rateLimitStore,
			ObjectProvider<OverloadStatus> overload, ObjectProvider<RateLimiter> rateLimiter) {
		RateLimiter limiter = rateLimiter.getIfAvailable();
		return new RateLimitsEndpoint(rateLimitResolver, rateLimitStore, overload.getIfAvailable(),
				(limiter != null) ? limiter.settledCosts() : new SettledCosts());
	}

	@Bean
	@ConditionalOnMissingBean
	@ConditionalOnBean(RateLimitsEndpoint.class)
	@ConditionalOnAvailableEndpoint(endpoint = RateLimitsEndpoint.class, exposure = EndpointExposure.WEB)
	RateLimitsEndpointWebExtension rateLimitsEndpointWebExtension(RateLimitsEndpoint rateLimitsEndpoint) {
		return new RateLimitsEndpointWebExtension(rateLimitsEndpoint);
	}

	@Bean
	@ConditionalOnBean(RateLimitsEndpointWebExtension.class)
	@ConditionalOnMissingClass("org.springframework.security.web.SecurityFilterChain")
	RateLimitsEndpointResetWarning rateLimitsEndpointResetWarning(Environment environment) {
		return new RateLimitsEndpointResetWarning(environment);
	}

}
