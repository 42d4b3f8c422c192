package io.github.ratelimit.autoconfigure;

import io.micrometer.core.instrument.MeterRegistry;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import io.github.ratelimit.internal.core.LimitResolver;
import io.github.ratelimit.internal.metrics.RateLimitMetrics;
import io.github.ratelimit.store.RateLimitStore;

/**
 * Micrometer meters of the limiter, when the application has a {@link MeterRegistry}.
 */
@Configuration(proxyBeanMethods = false)
@ConditionalOnClass(name = "io.micrometer.core.instrument.MeterRegistry")
@ConditionalOnBean(type = "io.micrometer.core.instrument.MeterRegistry")
class RateLimitMetricsConfiguration {

	@Bean
	@ConditionalOnMissingBean
	RateLimitMetrics rateLimitMetrics(MeterRegistry meterRegistry, ObjectProvider<RateLimitStore> rateLimitStore,
			ObjectProvider<LimitResolver> rateLimitResolver) {
		return new RateLimitMetrics(meterRegistry, rateLimitStore::getIfAvailable, (limit) -> {
			LimitResolver resolver = rateLimitResolver.getIfAvailable();
			return (resolver != null) ? resolver.unitOf(limit) : null;
		});
	}

}
