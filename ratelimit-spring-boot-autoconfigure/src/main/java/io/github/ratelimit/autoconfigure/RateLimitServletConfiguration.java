package io.github.ratelimit.autoconfigure;

import java.util.List;

import jakarta.servlet.DispatcherType;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.web.servlet.DispatcherServlet;
import org.springframework.web.method.support.HandlerMethodArgumentResolver;
import org.springframework.web.servlet.config.annotation.InterceptorRegistry;
import org.springframework.web.servlet.config.annotation.WebMvcConfigurer;
import org.springframework.web.servlet.mvc.method.annotation.RequestMappingHandlerMapping;

import io.github.ratelimit.internal.pipeline.MethodLimits;
import io.github.ratelimit.internal.pipeline.RateLimitedMethods;
import io.github.ratelimit.internal.pipeline.RequestRateLimiter;
import io.github.ratelimit.internal.web.HandlerLimitsValidator;
import io.github.ratelimit.internal.web.RateLimitExceptionResolver;
import io.github.ratelimit.internal.web.RateLimitFilter;
import io.github.ratelimit.internal.web.RateLimitHandlerInterceptor;
import io.github.ratelimit.internal.web.RateLimitUsageArgumentResolver;
import io.github.ratelimit.internal.web.WebCallContextProvider;

/**
 * The servlet front end of the request pipeline: the route filter, the handler
 * interceptor, the {@code 429} exception resolver and the call context of handlers.
 */
@Configuration(proxyBeanMethods = false)
@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.SERVLET)
@ConditionalOnClass(DispatcherServlet.class)
@Import(RateLimitPipelineConfiguration.class)
class RateLimitServletConfiguration {

	/** Name of the filter registration. */
	static final String FILTER_NAME = "rateLimitFilter";

	@Bean
	FilterRegistrationBean<RateLimitFilter> rateLimitFilter(RequestRateLimiter requestRateLimiter,
			RateLimitProperties properties) {
		FilterRegistrationBean<RateLimitFilter> registration = new FilterRegistrationBean<>(
				new RateLimitFilter(requestRateLimiter));
		registration.setName(FILTER_NAME);
		registration.setOrder(properties.getFilterOrder());
		registration.setDispatcherTypes(DispatcherType.REQUEST);
		return registration;
	}

	@Bean
	WebMvcConfigurer rateLimitWebMvcConfigurer(RequestRateLimiter requestRateLimiter, MethodLimits rateLimitMethodLimits) {
		RateLimitHandlerInterceptor interceptor = new RateLimitHandlerInterceptor(requestRateLimiter,
				rateLimitMethodLimits);
		return new WebMvcConfigurer() {
			@Override
			public void addInterceptors(InterceptorRegistry registry) {
				registry.addInterceptor(interceptor);
			}

			@Override
			public void addArgumentResolvers(List<HandlerMethodArgumentResolver> resolvers) {
				// a handler reports its actual cost to a RateLimitUsage parameter
				resolvers.add(new RateLimitUsageArgumentResolver());
			}
		};
	}

	@Bean
	RateLimitExceptionResolver rateLimitExceptionResolver(RequestRateLimiter requestRateLimiter) {
		return new RateLimitExceptionResolver(requestRateLimiter);
	}

	@Bean
	@ConditionalOnMissingBean
	WebCallContextProvider webCallContextProvider(RequestRateLimiter requestRateLimiter) {
		return new WebCallContextProvider(requestRateLimiter);
	}

	@Bean
	HandlerLimitsValidator handlerLimitsValidator(ObjectProvider<RequestMappingHandlerMapping> mappings,
			RateLimitedMethods rateLimitedMethods, ObjectProvider<MethodLimits> methodLimits) {
		return new HandlerLimitsValidator(mappings, rateLimitedMethods, methodLimits::getObject);
	}

}
