package io.github.ratelimit.autoconfigure;

import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.ArrayList;
import java.util.List;

import org.jspecify.annotations.Nullable;

import org.springframework.aot.hint.BindingReflectionHintsRegistrar;
import org.springframework.aot.hint.ExecutableMode;
import org.springframework.aot.hint.MemberCategory;
import org.springframework.aot.hint.ReflectionHints;
import org.springframework.beans.factory.aot.BeanRegistrationAotContribution;
import org.springframework.beans.factory.aot.BeanRegistrationAotProcessor;
import org.springframework.beans.factory.support.RegisteredBean;
import org.springframework.core.annotation.MergedAnnotations;
import org.springframework.core.annotation.MergedAnnotations.SearchStrategy;
import org.springframework.util.ClassUtils;
import org.springframework.util.ReflectionUtils;

import io.github.ratelimit.RateLimited;

/**
 * What a native image needs to know about a {@link RateLimited} bean, registered when
 * Spring's AOT engine processes the application's beans: the annotated methods (or, for
 * an annotated type, its public methods) are invoked reflectively by the method
 * interceptor and read for their annotations and parameter names; the types of their
 * parameters are read by key expressions ({@code #order.customer.id}) when a limit has
 * one. The annotation itself knows nothing of Spring, so this processor finds it on the
 * beans rather than Spring's {@code @Reflective} on the annotation.
 */
class RateLimitedBeanAotProcessor implements BeanRegistrationAotProcessor {

	private final BindingReflectionHintsRegistrar bindings = new BindingReflectionHintsRegistrar();

	@Override
	public @Nullable BeanRegistrationAotContribution processAheadOfTime(RegisteredBean registeredBean) {
		Class<?> type = ClassUtils.getUserClass(registeredBean.getBeanClass());
		boolean onType = limited(MergedAnnotations.from(type, SearchStrategy.TYPE_HIERARCHY));
		List<Method> methods = new ArrayList<>();
		ReflectionUtils.doWithMethods(type, methods::add,
				(method) -> limited(MergedAnnotations.from(method, SearchStrategy.TYPE_HIERARCHY)));
		if (!onType && methods.isEmpty()) {
			return null;
		}
		return (generationContext, code) -> {
			ReflectionHints hints = generationContext.getRuntimeHints().reflection();
			if (onType) {
				registerTypeHint(hints, type);
			}
			methods.forEach((method) -> registerMethodHint(hints, method));
		};
	}

	private void registerTypeHint(ReflectionHints hints, Class<?> type) {
		hints.registerType(type, MemberCategory.INVOKE_PUBLIC_METHODS);
		if (hasKeyExpression(MergedAnnotations.from(type, SearchStrategy.TYPE_HIERARCHY))) {
			for (Method method : type.getMethods()) {
				if (method.getDeclaringClass() != Object.class && !Modifier.isStatic(method.getModifiers())) {
					registerParameterTypes(hints, method);
				}
			}
		}
	}

	private void registerMethodHint(ReflectionHints hints, Method method) {
		hints.registerMethod(method, ExecutableMode.INVOKE);
		// the bean's class is walked for its limited methods when the context starts
		hints.registerType(method.getDeclaringClass());
		if (hasKeyExpression(MergedAnnotations.from(method, SearchStrategy.TYPE_HIERARCHY))
				|| hasKeyExpression(MergedAnnotations.from(method.getDeclaringClass(), SearchStrategy.TYPE_HIERARCHY))) {
			registerParameterTypes(hints, method);
		}
	}

	private void registerParameterTypes(ReflectionHints hints, Method method) {
		this.bindings.registerReflectionHints(hints, method.getGenericParameterTypes());
	}

	private static boolean limited(MergedAnnotations annotations) {
		return annotations.isPresent(RateLimited.class);
	}

	private static boolean hasKeyExpression(MergedAnnotations annotations) {
		return annotations.stream(RateLimited.class)
			.anyMatch((annotation) -> !annotation.getString("keyExpression").isEmpty());
	}

}
