package io.github.ratelimit.autoconfigure;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.beans.factory.config.BeanDefinition;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnNotWebApplication;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Conditional;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.context.annotation.Role;
import org.springframework.core.env.Environment;

import io.github.ratelimit.PlanResolver;
import io.github.ratelimit.RateLimitConfigurationException;
import io.github.ratelimit.internal.aop.RateLimitedAdvisor;
import io.github.ratelimit.internal.aop.RateLimitedBeansValidator;
import io.github.ratelimit.internal.aop.RateLimitedMethodInterceptor;
import io.github.ratelimit.internal.core.LimitResolver;
import io.github.ratelimit.internal.core.RateLimitClock;
import io.github.ratelimit.store.RateLimitObserver;
import io.github.ratelimit.internal.core.RateLimitSleeper;
import io.github.ratelimit.internal.core.RateLimitWaiter;
import io.github.ratelimit.internal.core.RateLimiter;
import io.github.ratelimit.internal.pipeline.AuthorityPlanResolver;
import io.github.ratelimit.internal.pipeline.CallContextProvider;
import io.github.ratelimit.internal.pipeline.DetachedCallContext;
import io.github.ratelimit.internal.pipeline.MethodLimits;
import io.github.ratelimit.internal.pipeline.RateLimitedMethods;
import io.github.ratelimit.store.RateLimitStore;

/**
 * Auto-configuration of rate limiting: limits from {@code @RateLimited} on any bean and
 * from {@code ratelimit.routes}, decided by the Redis store when the application has a
 * {@code RedisConnectionFactory} (or {@code ratelimit.store=redis}), by an in-memory store
 * otherwise, unless the application provides its own {@link RateLimitStore}. Calls that
 * wait for a permit ({@code maxWait}) are timed by a {@link RateLimitWaiter}, closed with
 * the context.
 */
@AutoConfiguration(
		afterName = { "org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration",
				"org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration",
				"org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration" },
		// its redis health indicator replaces Boot's, which backs off for the bean name
		beforeName = { "org.springframework.boot.data.redis.autoconfigure.health.DataRedisHealthContributorAutoConfiguration",
				"org.springframework.boot.data.redis.autoconfigure.health.DataRedisReactiveHealthContributorAutoConfiguration" })
@Conditional(OnRateLimitEnabledCondition.class)
@EnableConfigurationProperties(RateLimitProperties.class)
@Import({ RateLimitMetricsConfiguration.class, RateLimitHealthConfiguration.class, RateLimitStoreConfigurations.Redis.class,
		RateLimitJdbcStoreConfiguration.class, RateLimitStoreConfigurations.InMemory.class, RateLimitServletConfiguration.class,
		RateLimitReactiveConfiguration.class, RateLimitOverloadConfiguration.class, RateLimitEndpointConfiguration.class,
		RateLimitAutoConfiguration.NotWebApplication.class })
public final class RateLimitAutoConfiguration {

	RateLimitAutoConfiguration(Environment environment) {
		// before any limit is built from the properties: a misspelled one fails by its name
		UnknownRateLimitProperties.check(environment);
	}

	@Bean
	@ConditionalOnMissingBean
	LimitResolver rateLimitResolver(RateLimitProperties properties) {
		return RateLimitPropertiesMapper.limitResolver(properties);
	}

	@Bean
	@ConditionalOnMissingBean
	PlanResolver rateLimitPlanResolver(RateLimitProperties properties) {
		return new AuthorityPlanResolver(RateLimitPropertiesMapper.authorityPrefix(properties));
	}

	@Bean
	@ConditionalOnMissingBean
	RateLimitClock rateLimitClock() {
		return RateLimitClock.system();
	}

	@Bean
	@ConditionalOnMissingBean
	RateLimiter rateLimiter(RateLimitStore rateLimitStore, ObjectProvider<RateLimitObserver> observers) {
		return new RateLimiter(rateLimitStore, RateLimitObservers.of(observers));
	}

	@Bean
	@ConditionalOnMissingBean
	RateLimitWaiter rateLimitWaiter(RateLimiter rateLimiter, RateLimitClock rateLimitClock) {
		return new RateLimitWaiter(rateLimiter, rateLimitClock, RateLimitSleeper.system(), null);
	}

	@Bean
	@Role(BeanDefinition.ROLE_INFRASTRUCTURE)
	static RateLimitedMethods rateLimitedMethods() {
		return new RateLimitedMethods();
	}

	@Bean
	@Role(BeanDefinition.ROLE_INFRASTRUCTURE)
	static RateLimitedAdvisor rateLimitedAdvisor(RateLimitedMethods rateLimitedMethods,
			ObjectProvider<RateLimitedMethodInterceptor> interceptor) {
		return new RateLimitedAdvisor(rateLimitedMethods, interceptor::getObject);
	}

	@Bean
	@ConditionalOnMissingBean
	MethodLimits rateLimitMethodLimits(RateLimitedMethods rateLimitedMethods, LimitResolver rateLimitResolver) {
		return new MethodLimits(rateLimitedMethods, rateLimitResolver);
	}

	@Bean
	@ConditionalOnMissingBean
	RateLimitedMethodInterceptor rateLimitedMethodInterceptor(MethodLimits rateLimitMethodLimits,
			RateLimiter rateLimiter, ObjectProvider<CallContextProvider> contexts, RateLimitWaiter rateLimitWaiter,
			PlanResolver rateLimitPlanResolver, RateLimitProperties properties) {
		CallContextProvider provider = contexts.getIfAvailable(() -> () -> DetachedCallContext.INSTANCE);
		return RateLimitedMethodInterceptor.builder(rateLimitMethodLimits, rateLimiter, rateLimitWaiter)
			.contexts(provider)
			.plans(rateLimitPlanResolver)
			.failedCallsKeepReservation(properties.isFailedCallsKeepReservation())
			.build();
	}

	@Bean
	static RateLimitedBeansValidator rateLimitedBeansValidator(ConfigurableListableBeanFactory beanFactory,
			RateLimitedMethods rateLimitedMethods, ObjectProvider<MethodLimits> methodLimits) {
		return new RateLimitedBeansValidator(beanFactory, rateLimitedMethods, methodLimits::getObject);
	}

	/**
	 * Outside a web application nothing enforces {@code ratelimit.routes}: say so at
	 * startup rather than limit nothing.
	 */
	@Configuration(proxyBeanMethods = false)
	@ConditionalOnNotWebApplication
	static class NotWebApplication {

		@Bean
		static SmartInitializingSingleton rateLimitRoutesWithoutWebApplication(RateLimitProperties properties) {
			return () -> {
				if (!properties.getRoutes().isEmpty()) {
					throw new RateLimitConfigurationException("ratelimit.routes",
							properties.getRoutes().size() + " route limit(s) are configured but the application is "
									+ "neither a servlet nor a reactive web application, so nothing would enforce them",
							"Remove ratelimit.routes, or run the application as a web application "
									+ "(spring-boot-starter-webmvc or spring-boot-starter-webflux)");
				}
			};
		}

	}

}
