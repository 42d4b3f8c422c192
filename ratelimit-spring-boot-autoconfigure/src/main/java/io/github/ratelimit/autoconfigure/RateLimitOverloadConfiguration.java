package io.github.ratelimit.autoconfigure;

import io.micrometer.core.instrument.MeterRegistry;
import jakarta.servlet.DispatcherType;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;
import org.springframework.web.reactive.DispatcherHandler;
import org.springframework.web.servlet.DispatcherServlet;

import io.github.ratelimit.RequestPriorityResolver;
import io.github.ratelimit.internal.actuate.OverloadStatus;
import io.github.ratelimit.internal.metrics.OverloadMetrics;
import io.github.ratelimit.internal.overload.OverloadLimiter;
import io.github.ratelimit.internal.pipeline.OverloadGate;
import io.github.ratelimit.internal.web.HandlerPriorities;
import io.github.ratelimit.internal.web.OverloadFilter;
import io.github.ratelimit.internal.webflux.OverloadWebFilter;
import io.github.ratelimit.internal.webflux.ReactiveHandlerPriorities;

/**
 * Overload protection, when {@code ratelimit.overload.enabled=true}: an adaptive limit on
 * the calls in flight, enforced by a filter on the servlet or reactive stack ahead of the
 * route filter and Spring Security, with its meters when the application has a
 * {@link MeterRegistry}.
 */
@Configuration(proxyBeanMethods = false)
@ConditionalOnWebApplication
@ConditionalOnBooleanProperty("ratelimit.overload.enabled")
@EnableConfigurationProperties(RateLimitOverloadProperties.class)
class RateLimitOverloadConfiguration {

	/** Name of the servlet filter registration. */
	static final String FILTER_NAME = "rateLimitOverloadFilter";

	/** Where the actuator's endpoints are when the application does not say. */
	private static final String DEFAULT_MANAGEMENT_PATH = "/actuator";

	@Bean
	@ConditionalOnMissingBean
	OverloadLimiter rateLimitOverloadLimiter(RateLimitOverloadProperties properties) {
		return RateLimitOverloadMapper.limiter(properties);
	}

	@Bean
	@ConditionalOnMissingBean
	OverloadGate rateLimitOverloadGate(OverloadLimiter rateLimitOverloadLimiter, RateLimitOverloadProperties properties,
			ObjectProvider<RequestPriorityResolver> resolvers, Environment environment) {
		return OverloadGate.builder(rateLimitOverloadLimiter)
			.resolvers(resolvers.orderedStream().toList())
			.priorityHeader(properties.getPriorityHeader())
			.routes(RateLimitOverloadMapper.routes(properties))
			.paths(RateLimitOverloadMapper.patterns(properties.getPaths(), "paths"))
			.excludePaths(RateLimitOverloadMapper.patterns(properties.getExcludePaths(), "exclude-paths"))
			.managementPath(environment.getProperty("management.endpoints.web.base-path", DEFAULT_MANAGEMENT_PATH))
			.defaultPriority(properties.getDefaultPriority())
			.retryAfter(properties.getRetryAfter())
			.build();
	}

	@Bean
	OverloadStatus rateLimitOverloadStatus(OverloadLimiter rateLimitOverloadLimiter,
			RateLimitOverloadProperties properties) {
		return new OverloadStatus(rateLimitOverloadLimiter, properties.getAlgorithm().name());
	}

	@Configuration(proxyBeanMethods = false)
	@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.SERVLET)
	@ConditionalOnClass(DispatcherServlet.class)
	static class ServletOverloadConfiguration {

		@Bean
		FilterRegistrationBean<OverloadFilter> rateLimitOverloadFilter(OverloadGate rateLimitOverloadGate) {
			FilterRegistrationBean<OverloadFilter> registration = new FilterRegistrationBean<>(
					new OverloadFilter(rateLimitOverloadGate));
			registration.setName(FILTER_NAME);
			registration.setOrder(OverloadFilter.DEFAULT_ORDER);
			registration.setDispatcherTypes(DispatcherType.REQUEST);
			return registration;
		}

		@Bean
		HandlerPriorities rateLimitOverloadHandlerPriorities(
				ObjectProvider<org.springframework.web.servlet.mvc.method.annotation.RequestMappingHandlerMapping> mappings,
				OverloadGate rateLimitOverloadGate) {
			return new HandlerPriorities(mappings, rateLimitOverloadGate);
		}

	}

	@Configuration(proxyBeanMethods = false)
	@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.REACTIVE)
	@ConditionalOnClass(DispatcherHandler.class)
	static class ReactiveOverloadConfiguration {

		@Bean
		OverloadWebFilter rateLimitOverloadWebFilter(OverloadGate rateLimitOverloadGate) {
			return new OverloadWebFilter(rateLimitOverloadGate, OverloadWebFilter.DEFAULT_ORDER);
		}

		@Bean
		ReactiveHandlerPriorities rateLimitOverloadHandlerPriorities(
				ObjectProvider<org.springframework.web.reactive.result.method.annotation.RequestMappingHandlerMapping> mappings,
				OverloadGate rateLimitOverloadGate) {
			return new ReactiveHandlerPriorities(mappings, rateLimitOverloadGate);
		}

	}

	@Configuration(proxyBeanMethods = false)
	@ConditionalOnClass(name = "io.micrometer.core.instrument.MeterRegistry")
	@ConditionalOnBean(type = "io.micrometer.core.instrument.MeterRegistry")
	static class OverloadMetricsConfiguration {

		@Bean
		OverloadMetrics rateLimitOverloadMetrics(MeterRegistry meterRegistry,
				OverloadLimiter rateLimitOverloadLimiter) {
			return new OverloadMetrics(meterRegistry, rateLimitOverloadLimiter);
		}

	}

}
