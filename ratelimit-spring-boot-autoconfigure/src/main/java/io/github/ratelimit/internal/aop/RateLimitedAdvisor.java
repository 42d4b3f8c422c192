package io.github.ratelimit.internal.aop;

import java.lang.reflect.Method;
import java.util.function.Supplier;

import org.aopalliance.aop.Advice;
import org.aopalliance.intercept.MethodInterceptor;

import org.jspecify.annotations.Nullable;

import org.springframework.aop.Pointcut;
import org.springframework.aop.support.AbstractPointcutAdvisor;
import org.springframework.aop.support.StaticMethodMatcherPointcut;
import org.springframework.beans.factory.SmartInitializingSingleton;

import io.github.ratelimit.internal.pipeline.RateLimitedMethods;

/**
 * Applies {@link RateLimitedMethodInterceptor} to every method carrying (or whose type
 * carries) {@code @RateLimited}. The interceptor is looked up once every singleton exists,
 * so that the advisor, which the auto-proxy creator instantiates early, does not drag the
 * store and its dependencies out of normal bean post-processing. Calls never wait for that
 * look-up: a reactive handler's first calls run on event loops, several at once, and a
 * lock there would park one of them.
 */
public final class RateLimitedAdvisor extends AbstractPointcutAdvisor implements SmartInitializingSingleton {

	private static final long serialVersionUID = 1L;

	private final transient RateLimitedMethods methods;

	private final transient Supplier<RateLimitedMethodInterceptor> interceptor;

	private transient volatile @Nullable RateLimitedMethodInterceptor resolved;

	private final transient Pointcut pointcut = new StaticMethodMatcherPointcut() {
		@Override
		public boolean matches(Method method, Class<?> targetClass) {
			return RateLimitedAdvisor.this.methods.isRateLimited(method, targetClass);
		}
	};

	private final transient Advice advice = (MethodInterceptor) this::invoke;

	/**
	 * Creates an advisor.
	 * @param methods finds the annotations
	 * @param interceptor supplies the interceptor, the same one each time it is asked (a
	 * singleton bean)
	 */
	public RateLimitedAdvisor(RateLimitedMethods methods, Supplier<RateLimitedMethodInterceptor> interceptor) {
		this.methods = methods;
		this.interceptor = interceptor;
	}

	@Override
	public void afterSingletonsInstantiated() {
		interceptor();
	}

	private Object invoke(org.aopalliance.intercept.MethodInvocation invocation) throws Throwable {
		return interceptor().invoke(invocation);
	}

	/**
	 * The interceptor, looked up without a lock: a call made before every singleton exists
	 * (from another bean's initialisation) may look it up twice, and gets the same one.
	 */
	private RateLimitedMethodInterceptor interceptor() {
		RateLimitedMethodInterceptor current = this.resolved;
		if (current == null) {
			current = this.interceptor.get();
			this.resolved = current;
		}
		return current;
	}

	@Override
	public Pointcut getPointcut() {
		return this.pointcut;
	}

	@Override
	public Advice getAdvice() {
		return this.advice;
	}

}
