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
import org.springframework.web.servlet.DispatcherServlet;
import org.springframework.web.servlet.config.annotation.InterceptorRegistry;
import org.springframework.web.servlet.config.annotation.WebMvcConfigurer;
import org.springframework.web.servlet.mvc.method.annotation.RequestMappingHandlerMapping;

import io.github.ratelimit.PlanResolver;
import io.github.ratelimit.aop.RateLimitedMethodInterceptor;
import io.github.ratelimit.aop.RateLimitedMethods;
import io.github.ratelimit.core.LimitResolver;
import io.github.ratelimit.core.RateLimiter;
import io.github.ratelimit.web.ClientIpResolver;
import io.github.ratelimit.web.HandlerLimitsValidator;
import io.github.ratelimit.web.RateLimitExceptionResolver;
import io.github.ratelimit.web.RateLimitFilter;
import io.github.ratelimit.web.RateLimitHandlerInterceptor;
import io.github.ratelimit.web.RateLimitResponseWriter;
import io.github.ratelimit.web.RequestIdentityResolver;
import io.github.ratelimit.web.RouteLimit;
import io.github.ratelimit.web.WebCallContextProvider;
import io.github.ratelimit.web.WebRateLimiter;

/**
 * Rate limiting of servlet web applications: the route filter, the handler interceptor,
 * the {@code 429} exception resolver and request identities.
 */
@Configuration(proxyBeanMethods = false)
@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.SERVLET)
@ConditionalOnClass(DispatcherServlet.class)
class RateLimitServletConfiguration {

	/** Name of the filter registration. */
	static final String FILTER_NAME = "rateLimitFilter";

	@Bean
	@ConditionalOnMissingBean
	ClientIpResolver clientIpResolver(RateLimitProperties properties) {
		return RateLimitPropertiesMapper.clientIpResolver(properties);
	}

	@Bean
	@ConditionalOnMissingBean
	RequestIdentityResolver requestIdentityResolver(RateLimitProperties properties, ClientIpResolver clientIpResolver) {
		return new RequestIdentityResolver(clientIpResolver, properties.getTenant().getHeader(),
				RateLimitPropertiesMapper.tenantPattern(properties));
	}

	@Bean
	@ConditionalOnMissingBean
	RateLimitResponseWriter rateLimitResponseWriter(RateLimitProperties properties) {
		return new RateLimitResponseWriter(properties.getHeaders());
	}

	@Bean
	WebRateLimiter webRateLimiter(RateLimiter rateLimiter, RequestIdentityResolver requestIdentityResolver,
			RateLimitResponseWriter rateLimitResponseWriter, RateLimitProperties properties,
			LimitResolver rateLimitResolver, PlanResolver rateLimitPlanResolver) {
		List<RouteLimit> routes = RateLimitRoutesMapper.routes(properties, rateLimitResolver);
		return new WebRateLimiter(rateLimiter, requestIdentityResolver, rateLimitResponseWriter, routes,
				rateLimitPlanResolver);
	}

	@Bean
	FilterRegistrationBean<RateLimitFilter> rateLimitFilter(WebRateLimiter webRateLimiter,
			RateLimitProperties properties) {
		FilterRegistrationBean<RateLimitFilter> registration = new FilterRegistrationBean<>(
				new RateLimitFilter(webRateLimiter));
		registration.setName(FILTER_NAME);
		registration.setOrder(properties.getFilterOrder());
		registration.setDispatcherTypes(DispatcherType.REQUEST);
		return registration;
	}

	@Bean
	WebMvcConfigurer rateLimitWebMvcConfigurer(WebRateLimiter webRateLimiter, RateLimitedMethods rateLimitedMethods) {
		RateLimitHandlerInterceptor interceptor = new RateLimitHandlerInterceptor(webRateLimiter, rateLimitedMethods);
		return new WebMvcConfigurer() {
			@Override
			public void addInterceptors(InterceptorRegistry registry) {
				registry.addInterceptor(interceptor);
			}
		};
	}

	@Bean
	RateLimitExceptionResolver rateLimitExceptionResolver(WebRateLimiter webRateLimiter) {
		return new RateLimitExceptionResolver(webRateLimiter);
	}

	@Bean
	@ConditionalOnMissingBean
	WebCallContextProvider webCallContextProvider(WebRateLimiter webRateLimiter,
			RequestIdentityResolver requestIdentityResolver) {
		return new WebCallContextProvider(webRateLimiter, requestIdentityResolver);
	}

	@Bean
	HandlerLimitsValidator handlerLimitsValidator(ObjectProvider<RequestMappingHandlerMapping> mappings,
			RateLimitedMethods rateLimitedMethods, ObjectProvider<RateLimitedMethodInterceptor> interceptor) {
		return new HandlerLimitsValidator(mappings, rateLimitedMethods, interceptor::getObject);
	}

}
