package io.github.ratelimit;

import java.lang.reflect.Method;
import java.lang.reflect.Modifier;

import org.springframework.aot.hint.BindingReflectionHintsRegistrar;
import org.springframework.aot.hint.MemberCategory;
import org.springframework.aot.hint.ReflectionHints;
import org.springframework.aot.hint.annotation.SimpleReflectiveProcessor;
import org.springframework.core.annotation.MergedAnnotations;
import org.springframework.core.annotation.MergedAnnotations.SearchStrategy;

/**
 * What a native image needs to know about a {@link RateLimited} bean, registered when
 * Spring's AOT engine processes the application's beans: the annotated methods (or, for
 * an annotated type, its public methods) are invoked reflectively by the method
 * interceptor and read for their annotations and parameter names; the types of their
 * parameters are read by key expressions ({@code #order.customer.id}) when a limit has
 * one.
 */
class RateLimitedReflectiveProcessor extends SimpleReflectiveProcessor {

	private final BindingReflectionHintsRegistrar bindings = new BindingReflectionHintsRegistrar();

	@Override
	protected void registerTypeHint(ReflectionHints hints, Class<?> type) {
		hints.registerType(type, MemberCategory.INVOKE_PUBLIC_METHODS);
		if (hasKeyExpression(MergedAnnotations.from(type, SearchStrategy.TYPE_HIERARCHY))) {
			for (Method method : type.getMethods()) {
				if (method.getDeclaringClass() != Object.class && !Modifier.isStatic(method.getModifiers())) {
					registerParameterTypes(hints, method);
				}
			}
		}
	}

	@Override
	protected void registerMethodHint(ReflectionHints hints, Method method) {
		super.registerMethodHint(hints, method);
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

	private static boolean hasKeyExpression(MergedAnnotations annotations) {
		return annotations.stream(RateLimited.class)
			.anyMatch((annotation) -> !annotation.getString("keyExpression").isEmpty());
	}

}
