package io.github.ratelimit.autoconfigure;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.web.reactive.DispatcherHandler;
import org.springframework.web.reactive.config.WebFluxConfigurer;
import org.springframework.web.reactive.result.method.annotation.ArgumentResolverConfigurer;
import org.springframework.web.reactive.result.method.annotation.RequestMappingHandlerMapping;

import io.github.ratelimit.PlanResolver;
import io.github.ratelimit.internal.pipeline.MethodLimits;
import io.github.ratelimit.internal.pipeline.RequestRateLimiter;
import io.github.ratelimit.internal.webflux.RateLimitExceptionAdvice;
import io.github.ratelimit.internal.webflux.RateLimitHandlerWebFilter;
import io.github.ratelimit.internal.webflux.RateLimitUsageArgumentResolver;
import io.github.ratelimit.internal.webflux.RateLimitWebFilter;
import io.github.ratelimit.internal.webflux.ReactiveHandlerLimits;

/**
 * The reactive front end of the request pipeline: the route filter before Spring
 * Security, the handler filter after it, the {@code 429} advice, and the handler limits
 * that the method interceptor leaves to them.
 */
@Configuration(proxyBeanMethods = false)
@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.REACTIVE)
@ConditionalOnClass(DispatcherHandler.class)
@Import(RateLimitPipelineConfiguration.class)
class RateLimitReactiveConfiguration {

	@Bean
	RateLimitWebFilter rateLimitWebFilter(RequestRateLimiter requestRateLimiter, RateLimitProperties properties) {
		return new RateLimitWebFilter(requestRateLimiter, properties.getFilterOrder());
	}

	@Bean
	@ConditionalOnMissingBean
	ReactiveHandlerLimits reactiveHandlerLimits(ObjectProvider<RequestMappingHandlerMapping> mappings,
			MethodLimits rateLimitMethodLimits, RequestRateLimiter requestRateLimiter,
			PlanResolver rateLimitPlanResolver) {
		return new ReactiveHandlerLimits(mappings, rateLimitMethodLimits, requestRateLimiter, rateLimitPlanResolver);
	}

	@Bean
	RateLimitHandlerWebFilter rateLimitHandlerWebFilter(RequestRateLimiter requestRateLimiter,
			ReactiveHandlerLimits reactiveHandlerLimits, ObjectProvider<RequestMappingHandlerMapping> mappings) {
		return new RateLimitHandlerWebFilter(requestRateLimiter, reactiveHandlerLimits, mappings);
	}

	@Bean
	WebFluxConfigurer rateLimitWebFluxConfigurer() {
		return new WebFluxConfigurer() {
			@Override
			public void configureArgumentResolvers(ArgumentResolverConfigurer configurer) {
				// a handler reports its actual cost to a RateLimitUsage parameter
				configurer.addCustomResolver(new RateLimitUsageArgumentResolver());
			}
		};
	}

	@Bean
	RateLimitExceptionAdvice rateLimitExceptionAdvice(RequestRateLimiter requestRateLimiter) {
		return new RateLimitExceptionAdvice(requestRateLimiter);
	}

}
