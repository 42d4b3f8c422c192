package io.github.ratelimit.internal.web;

import jakarta.servlet.http.HttpServletRequest;

import org.springframework.core.MethodParameter;
import org.springframework.web.bind.support.WebDataBinderFactory;
import org.springframework.web.context.request.NativeWebRequest;
import org.springframework.web.method.support.HandlerMethodArgumentResolver;
import org.springframework.web.method.support.ModelAndViewContainer;

import io.github.ratelimit.RateLimitUsage;

/**
 * Resolves a handler method parameter of type {@link RateLimitUsage} to the usage of the
 * request, where the handler reports its actual cost for the limits that settle once the
 * response is final.
 */
public final class RateLimitUsageArgumentResolver implements HandlerMethodArgumentResolver {

	@Override
	public boolean supportsParameter(MethodParameter parameter) {
		return parameter.getParameterType() == RateLimitUsage.class;
	}

	@Override
	public Object resolveArgument(MethodParameter parameter, ModelAndViewContainer mavContainer,
			NativeWebRequest webRequest, WebDataBinderFactory binderFactory) {
		HttpServletRequest request = webRequest.getNativeRequest(HttpServletRequest.class);
		return (request != null) ? ServletRateLimitRequest.costsOrCreate(request).usage() : RateLimitUsage.current();
	}

}
