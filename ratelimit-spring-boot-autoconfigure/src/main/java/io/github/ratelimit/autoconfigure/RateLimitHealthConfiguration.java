package io.github.ratelimit.autoconfigure;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import io.github.ratelimit.internal.actuate.RateLimitHealthIndicator;
import io.github.ratelimit.store.RateLimitStore;

/**
 * The limiter's health contributor ({@code rateLimit}), when Spring Boot's health support
 * is on the classpath.
 */
@Configuration(proxyBeanMethods = false)
@ConditionalOnClass(name = "org.springframework.boot.health.contributor.HealthIndicator")
class RateLimitHealthConfiguration {

	@Bean
	@ConditionalOnMissingBean(name = "rateLimitHealthIndicator")
	RateLimitHealthIndicator rateLimitHealthIndicator(ObjectProvider<RateLimitStore> rateLimitStore) {
		return new RateLimitHealthIndicator(rateLimitStore::getIfAvailable);
	}

}
