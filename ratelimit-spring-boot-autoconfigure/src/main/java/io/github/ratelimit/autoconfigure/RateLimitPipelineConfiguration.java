package io.github.ratelimit.autoconfigure;

import java.util.List;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import io.github.ratelimit.KeyResolver;
import io.github.ratelimit.PlanResolver;
import io.github.ratelimit.internal.core.LimitResolver;
import io.github.ratelimit.internal.core.RateLimiter;
import io.github.ratelimit.internal.pipeline.ClientIpResolver;
import io.github.ratelimit.internal.pipeline.RateLimitResponses;
import io.github.ratelimit.internal.pipeline.RateLimitedMethods;
import io.github.ratelimit.internal.pipeline.RequestIdentityResolver;
import io.github.ratelimit.internal.pipeline.RequestRateLimiter;
import io.github.ratelimit.internal.pipeline.RouteLimit;

/**
 * The request pipeline shared by the servlet and the reactive front ends: identities,
 * route limits, headers and problem responses. Imported by each front end, so that it
 * exists only where something enforces it.
 */
@Configuration(proxyBeanMethods = false)
class RateLimitPipelineConfiguration {

	@Bean
	@ConditionalOnMissingBean
	ClientIpResolver clientIpResolver(RateLimitProperties properties) {
		return RateLimitPropertiesMapper.clientIpResolver(properties);
	}

	@Bean
	@ConditionalOnMissingBean
	RequestIdentityResolver requestIdentityResolver(RateLimitProperties properties, ClientIpResolver clientIpResolver,
			ObjectProvider<KeyResolver> keyResolvers) {
		return new RequestIdentityResolver(clientIpResolver, properties.getTenant().getHeader(),
				RateLimitPropertiesMapper.tenantPattern(properties), keyResolvers.orderedStream().toList());
	}

	@Bean
	@ConditionalOnMissingBean
	RateLimitResponses rateLimitResponses(RateLimitProperties properties, LimitResolver rateLimitResolver) {
		// each limit's unit is read once, when its header text is first built
		return new RateLimitResponses(properties.getHeaders(), rateLimitResolver::unitOf);
	}

	@Bean
	@ConditionalOnMissingBean
	RequestRateLimiter requestRateLimiter(RateLimiter rateLimiter, RequestIdentityResolver requestIdentityResolver,
			RateLimitResponses rateLimitResponses, RateLimitProperties properties, LimitResolver rateLimitResolver,
			PlanResolver rateLimitPlanResolver, ObjectProvider<RateLimitedMethods> rateLimitedMethods) {
		List<RouteLimit> routes = RateLimitRoutesMapper.routes(properties, rateLimitResolver);
		RateLimitedMethods methods = rateLimitedMethods.getIfAvailable();
		return RequestRateLimiter.builder(rateLimiter, rateLimitResponses)
			.identities(requestIdentityResolver)
			.routes(routes)
			.plans(rateLimitPlanResolver)
			// a request's route stage keeps a state only when a limited call could join it
			.callLimits((methods != null) ? methods::anyFound : () -> true)
			.failedCallsKeepReservation(properties.isFailedCallsKeepReservation())
			.build();
	}

}
