package io.github.ratelimit.autoconfigure;

import org.springframework.aot.hint.BindingReflectionHintsRegistrar;
import org.springframework.aot.hint.MemberCategory;
import org.springframework.aot.hint.RuntimeHints;
import org.springframework.aot.hint.RuntimeHintsRegistrar;
import org.springframework.aot.hint.TypeReference;
import org.springframework.util.ClassUtils;

import io.github.ratelimit.RateLimited;
import io.github.ratelimit.internal.actuate.RateLimitsEndpoint;
import io.github.ratelimit.internal.actuate.RateLimitsEndpointWebExtension;
import io.github.ratelimit.internal.redis.RedisScripts;

/**
 * What the starter reads reflectively or as a resource, for native images: the Lua
 * scripts of the Redis store, the {@link RateLimited} annotation's attributes, the request
 * types that key expressions reach as {@code #request}, and the bodies of the actuator
 * endpoint, which Jackson writes. Beans carrying {@code @RateLimited} are covered where
 * they are processed (the annotation is {@code @Reflective}); configuration properties
 * are covered by Spring Boot. Registered in {@code META-INF/spring/aot.factories}.
 */
class RateLimitRuntimeHints implements RuntimeHintsRegistrar {

	private static final String OPERATION_RESPONSE_BODY = "org.springframework.boot.actuate.endpoint.OperationResponseBody";

	/** What {@code #request} is in servlet and reactive requests, when present. */
	private static final String[] REQUEST_TYPES = { "jakarta.servlet.ServletRequest",
			"jakarta.servlet.http.HttpServletRequest", "jakarta.servlet.ServletRequestWrapper",
			"jakarta.servlet.http.HttpServletRequestWrapper", "org.apache.catalina.connector.RequestFacade",
			"org.springframework.http.HttpMessage", "org.springframework.http.HttpRequest",
			"org.springframework.http.server.reactive.ServerHttpRequest",
			"org.springframework.http.server.reactive.AbstractServerHttpRequest",
			"org.springframework.http.server.reactive.ServerHttpRequestDecorator",
			"org.springframework.http.server.reactive.ReactorServerHttpRequest" };

	@Override
	public void registerHints(RuntimeHints hints, ClassLoader classLoader) {
		hints.resources().registerPattern(RedisScripts.LOCATION + "*.lua");
		hints.reflection()
			.registerType(RateLimited.class, MemberCategory.INVOKE_PUBLIC_METHODS)
			.registerType(RateLimited.List.class, MemberCategory.INVOKE_PUBLIC_METHODS);
		for (String type : REQUEST_TYPES) {
			if (ClassUtils.isPresent(type, classLoader)) {
				hints.reflection().registerType(TypeReference.of(type), MemberCategory.INVOKE_PUBLIC_METHODS);
			}
		}
		if (ClassUtils.isPresent(OPERATION_RESPONSE_BODY, classLoader)) {
			// the operations declare OperationResponseBody; Jackson writes what they return
			new BindingReflectionHintsRegistrar().registerReflectionHints(hints.reflection(),
					RateLimitsEndpoint.LimitsDescriptor.class, RateLimitsEndpoint.IdentityDescriptor.class,
					RateLimitsEndpoint.ResetDescriptor.class, RateLimitsEndpointWebExtension.Rejection.class);
		}
	}

}
