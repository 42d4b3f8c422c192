package io.github.ratelimit.web;

import java.lang.reflect.AnnotatedElement;
import java.lang.reflect.Method;
import java.security.Principal;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;

import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RequestMethod;
import org.springframework.web.context.request.RequestAttributes;
import org.springframework.web.context.request.RequestContextHolder;
import org.springframework.web.context.request.ServletRequestAttributes;
import org.springframework.web.method.HandlerMethod;
import org.springframework.web.servlet.HandlerMapping;

import io.github.ratelimit.KeySource;
import io.github.ratelimit.aop.CallContext;
import io.github.ratelimit.aop.CallContextProvider;
import io.github.ratelimit.aop.DetachedCallContext;
import io.github.ratelimit.aop.PrincipalNames;
import io.github.ratelimit.core.Acquisition;
import io.github.ratelimit.core.RateLimitResult;

/**
 * Gives rate limited calls running inside a servlet request access to that request: its
 * canonical route, its identity, its deferred route limits and its response headers.
 */
public final class WebCallContextProvider implements CallContextProvider {

	private final WebRateLimiter limiter;

	private final RequestIdentityResolver identities;

	private final Map<Method, Set<String>> declaredMethods = new ConcurrentHashMap<>();

	/**
	 * Creates a provider.
	 * @param limiter the web limiter
	 * @param identities finds identities of requests
	 */
	public WebCallContextProvider(WebRateLimiter limiter, RequestIdentityResolver identities) {
		this.limiter = limiter;
		this.identities = identities;
	}

	@Override
	public CallContext current() {
		RequestAttributes attributes = RequestContextHolder.getRequestAttributes();
		if (attributes instanceof ServletRequestAttributes servlet) {
			return new RequestCallContext(servlet.getRequest(), servlet.getResponse());
		}
		return DetachedCallContext.INSTANCE;
	}

	/**
	 * The canonical route name of a request handled by {@code handler}.
	 * @param request the request
	 * @param handler its handler
	 * @return the route name, or {@code null} before handler mapping
	 */
	String routeName(HttpServletRequest request, HandlerMethod handler) {
		Object pattern = request.getAttribute(HandlerMapping.BEST_MATCHING_PATTERN_ATTRIBUTE);
		if (pattern == null) {
			return null;
		}
		Set<String> declared = this.declaredMethods.computeIfAbsent(handler.getMethod(),
				(method) -> declaredMethods(handler));
		return RouteNames.of(declared, request.getMethod(), pattern.toString());
	}

	/** The methods a handler is mapped to, combining its type and method mappings as Spring MVC does. */
	private static Set<String> declaredMethods(HandlerMethod handler) {
		Set<String> methods = new HashSet<>();
		for (AnnotatedElement element : new AnnotatedElement[] { handler.getBeanType(), handler.getMethod() }) {
			RequestMapping mapping = AnnotatedElementUtils.findMergedAnnotation(element, RequestMapping.class);
			if (mapping != null) {
				for (RequestMethod method : mapping.method()) {
					methods.add(method.name());
				}
			}
		}
		return Set.copyOf(methods);
	}

	private final class RequestCallContext implements CallContext {

		private final HttpServletRequest request;

		private final HttpServletResponse response;

		RequestCallContext(HttpServletRequest request, HttpServletResponse response) {
			this.request = request;
			this.response = response;
		}

		@Override
		public String handlerRouteName(Method method) {
			Object handler = this.request.getAttribute(HandlerMapping.BEST_MATCHING_HANDLER_ATTRIBUTE);
			if (handler instanceof HandlerMethod handlerMethod && handlerMethod.getMethod().equals(method)) {
				return routeName(this.request, handlerMethod);
			}
			return null;
		}

		@Override
		public String identity(List<KeySource> keyChain) {
			return WebCallContextProvider.this.identities.resolve(keyChain, this.request);
		}

		@Override
		public Principal principal() {
			return PrincipalNames.currentPrincipal(this.request.getUserPrincipal());
		}

		@Override
		public Object request() {
			return this.request;
		}

		@Override
		public List<Acquisition> takeDeferredAcquisitions() {
			return WebCallContextProvider.this.limiter.takeDeferred(this.request);
		}

		@Override
		public void allowed(List<Acquisition> acquisitions, RateLimitResult result) {
			WebCallContextProvider.this.limiter.allowed(acquisitions, result, this.request, this.response);
		}

		@Override
		public void rejected(RateLimitResult result, boolean refundEarlierStages) {
			WebCallContextProvider.this.limiter.rejected(result, this.request, refundEarlierStages);
		}

	}

}
