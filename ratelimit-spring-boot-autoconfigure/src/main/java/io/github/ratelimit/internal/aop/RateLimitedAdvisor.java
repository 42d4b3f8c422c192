package io.github.ratelimit.internal.aop;

import java.lang.reflect.Method;
import java.util.function.Supplier;

import org.aopalliance.aop.Advice;
import org.aopalliance.intercept.MethodInterceptor;

import org.springframework.aop.Pointcut;
import org.springframework.aop.support.AbstractPointcutAdvisor;
import org.springframework.aop.support.StaticMethodMatcherPointcut;
import org.springframework.util.function.SingletonSupplier;

import io.github.ratelimit.internal.pipeline.RateLimitedMethods;

/**
 * Applies {@link RateLimitedMethodInterceptor} to every method carrying (or whose type
 * carries) {@code @RateLimited}. The interceptor is created on first use, so that the
 * advisor, which the auto-proxy creator instantiates early, does not drag the store and
 * its dependencies out of normal bean post-processing.
 */
public final class RateLimitedAdvisor extends AbstractPointcutAdvisor {

	private static final long serialVersionUID = 1L;

	private final transient RateLimitedMethods methods;

	private final transient Supplier<RateLimitedMethodInterceptor> interceptor;

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
	 * @param interceptor supplies the interceptor on first use
	 */
	public RateLimitedAdvisor(RateLimitedMethods methods, Supplier<RateLimitedMethodInterceptor> interceptor) {
		this.methods = methods;
		this.interceptor = SingletonSupplier.of(interceptor);
	}

	private Object invoke(org.aopalliance.intercept.MethodInvocation invocation) throws Throwable {
		return this.interceptor.get().invoke(invocation);
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
