package io.github.ratelimit.autoconfigure;

import java.util.ArrayList;
import java.util.List;

import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.restclient.RestClientCustomizer;
import org.springframework.boot.restclient.RestTemplateCustomizer;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Conditional;
import org.springframework.context.annotation.Configuration;
import org.springframework.http.client.ClientHttpRequestInterceptor;

import io.github.ratelimit.internal.client.RateLimitRetryInterceptor;

/**
 * Auto-configuration of client retries, when {@code ratelimit.client.retry.enabled} is
 * true: a {@link RateLimitRetryInterceptor} bean, added to every {@code RestClient.Builder}
 * and {@code RestTemplateBuilder} that Spring Boot's restclient module provides.
 * Independent of {@code ratelimit.enabled}, which concerns the limits this application
 * enforces, not the ones it is subject to.
 */
@AutoConfiguration
@ConditionalOnClass(name = "org.springframework.http.client.ClientHttpRequestInterceptor")
@Conditional(OnClientRetryEnabledCondition.class)
@EnableConfigurationProperties(RateLimitClientProperties.class)
public final class RateLimitClientAutoConfiguration {

	@Bean
	@ConditionalOnMissingBean
	RateLimitRetryInterceptor rateLimitRetryInterceptor(RateLimitClientProperties properties) {
		return new RateLimitRetryInterceptor(ClientRetryPropertiesMapper.settings(properties.getRetry()));
	}

	@Configuration(proxyBeanMethods = false)
	@ConditionalOnClass(name = { "org.springframework.boot.restclient.RestClientCustomizer",
			"org.springframework.web.client.RestClient" })
	static class RestClientRetryConfiguration {

		@Bean
		RestClientCustomizer rateLimitRetryRestClientCustomizer(RateLimitRetryInterceptor rateLimitRetryInterceptor) {
			return (builder) -> builder.requestInterceptor(rateLimitRetryInterceptor);
		}

	}

	@Configuration(proxyBeanMethods = false)
	@ConditionalOnClass(name = { "org.springframework.boot.restclient.RestTemplateCustomizer",
			"org.springframework.web.client.RestTemplate" })
	static class RestTemplateRetryConfiguration {

		@Bean
		RestTemplateCustomizer rateLimitRetryRestTemplateCustomizer(
				RateLimitRetryInterceptor rateLimitRetryInterceptor) {
			return (restTemplate) -> {
				// through the setter, which drops a request factory built for the old list
				List<ClientHttpRequestInterceptor> interceptors = new ArrayList<>(restTemplate.getInterceptors());
				interceptors.add(rateLimitRetryInterceptor);
				restTemplate.setInterceptors(interceptors);
			};
		}

	}

}
