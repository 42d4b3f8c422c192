package io.github.ratelimit.internal.aop;

import java.util.List;
import java.util.Map;

import org.springframework.aop.framework.ProxyFactory;

import io.github.ratelimit.KeySource;
import io.github.ratelimit.internal.core.LimitResolver;
import io.github.ratelimit.internal.core.LimitSettings;
import io.github.ratelimit.internal.core.RateLimitWaiter;
import io.github.ratelimit.internal.core.RateLimiter;
import io.github.ratelimit.internal.pipeline.CallContextProvider;
import io.github.ratelimit.internal.pipeline.DetachedCallContext;
import io.github.ratelimit.internal.pipeline.MethodLimits;
import io.github.ratelimit.internal.pipeline.RateLimitedMethods;

/**
 * Bean proxies limited by the method interceptor as the auto-configuration wires it, for
 * tests of {@code @RateLimited} bean methods without an application context.
 */
final class LimitedProxies {

	private LimitedProxies() {
	}

	/** A proxy of {@code target} outside any web request, with no policies and the global key by default. */
	static <T> T proxy(T target, RateLimiter limiter, RateLimitWaiter waiter) {
		return proxy(target, Map.of(), limiter, waiter, () -> DetachedCallContext.INSTANCE);
	}

	/** A proxy of {@code target} with policies and a call context of the test's own. */
	static <T> T proxy(T target, Map<String, LimitSettings> policies, RateLimiter limiter, RateLimitWaiter waiter,
			CallContextProvider contexts) {
		return proxy(target, policies, limiter, waiter, contexts, true);
	}

	/** A proxy of {@code target} outside any web request whose failed calls give their reservation back. */
	static <T> T proxyGivingFailedReservationsBack(T target, RateLimiter limiter, RateLimitWaiter waiter) {
		return proxy(target, Map.of(), limiter, waiter, () -> DetachedCallContext.INSTANCE, false);
	}

	@SuppressWarnings("unchecked")
	private static <T> T proxy(T target, Map<String, LimitSettings> policies, RateLimiter limiter,
			RateLimitWaiter waiter, CallContextProvider contexts, boolean failedCallsKeepReservation) {
		RateLimitedMethods methods = new RateLimitedMethods();
		LimitResolver resolver = new LimitResolver(policies, List.of(KeySource.GLOBAL));
		RateLimitedMethodInterceptor interceptor = RateLimitedMethodInterceptor
			.builder(new MethodLimits(methods, resolver), limiter, waiter)
			.contexts(contexts)
			.failedCallsKeepReservation(failedCallsKeepReservation)
			.build();
		ProxyFactory factory = new ProxyFactory(target);
		factory.setProxyTargetClass(true);
		factory.addAdvisor(new RateLimitedAdvisor(methods, () -> interceptor));
		return (T) factory.getProxy();
	}

}
