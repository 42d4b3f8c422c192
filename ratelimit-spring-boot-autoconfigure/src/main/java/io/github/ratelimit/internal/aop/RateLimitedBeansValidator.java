package io.github.ratelimit.internal.aop;

import java.lang.reflect.Method;
import java.util.List;
import java.util.function.Supplier;

import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.core.annotation.MergedAnnotations;
import org.springframework.core.annotation.MergedAnnotations.SearchStrategy;
import org.springframework.stereotype.Controller;
import org.springframework.util.ClassUtils;
import org.springframework.util.ReflectionUtils;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.RateLimitConfigurationException;
import io.github.ratelimit.internal.core.AlgorithmSpec;
import io.github.ratelimit.internal.pipeline.AnnotatedLimit;
import io.github.ratelimit.internal.pipeline.MethodLimits;
import io.github.ratelimit.internal.pipeline.RateLimitedMethods;

/**
 * Validates every {@code @RateLimited} method of every bean once the context is built, so
 * that a broken annotation fails the startup instead of the first call. Unnamed limits on
 * controllers are named after their routes and validated with them by the web layer.
 */
public final class RateLimitedBeansValidator implements SmartInitializingSingleton {

	private final ConfigurableListableBeanFactory beanFactory;

	private final RateLimitedMethods methods;

	private final Supplier<MethodLimits> limits;

	/**
	 * Creates a validator.
	 * @param beanFactory the bean factory to scan
	 * @param methods finds the annotations
	 * @param limits resolves the limits
	 */
	public RateLimitedBeansValidator(ConfigurableListableBeanFactory beanFactory, RateLimitedMethods methods,
			Supplier<MethodLimits> limits) {
		this.beanFactory = beanFactory;
		this.methods = methods;
		this.limits = limits;
	}

	@Override
	public void afterSingletonsInstantiated() {
		for (String name : this.beanFactory.getBeanDefinitionNames()) {
			Class<?> type = this.beanFactory.getType(name, false);
			if (type == null) {
				continue;
			}
			Class<?> userClass = ClassUtils.getUserClass(type);
			if (userClass.getName().startsWith("org.springframework.")) {
				continue;
			}
			boolean controller = MergedAnnotations.from(userClass, SearchStrategy.TYPE_HIERARCHY)
				.isPresent(Controller.class);
			ReflectionUtils.doWithMethods(userClass, (method) -> validate(method, userClass, controller),
					ReflectionUtils.USER_DECLARED_METHODS);
		}
	}

	private void validate(Method method, Class<?> userClass, boolean controller) {
		List<AnnotatedLimit> limits = this.methods.find(method, userClass);
		for (AnnotatedLimit limit : limits) {
			Algorithm algorithm = limit.settings().algorithm();
			if (limit.name() != null || !controller) {
				algorithm = this.limits.get().definition(limit, limit.nameFor(null, method)).limit().algorithm();
			}
			if (algorithm != null && AlgorithmSpec.of(algorithm).heldInFlight() && !limit.outcomes().countsAll()) {
				throw new RateLimitConfigurationException(limit.origin() + " (countExceptions, countWhen)",
						"a concurrency limit gives back every call's permit when it completes, so no outcome counts",
						"Remove countExceptions and countWhen, or use a rate limit to count calls by their outcome");
			}
		}
	}

}
