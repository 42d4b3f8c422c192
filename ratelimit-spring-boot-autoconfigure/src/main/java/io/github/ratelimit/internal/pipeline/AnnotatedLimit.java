package io.github.ratelimit.internal.pipeline;

import java.lang.reflect.Method;

import org.springframework.expression.Expression;

import io.github.ratelimit.internal.core.LimitSettings;

/**
 * One {@code @RateLimited} annotation as found on a method or its type, with its
 * attributes already parsed.
 *
 * @param name the explicit name, or {@code null} to derive one
 * @param settings the attributes as settings
 * @param keyExpression the parsed key expression, or {@code null}
 * @param origin where it was found, for error messages
 * @param suffix what tells this limit apart from other unnamed limits on the same method
 * ({@code ""} when it is the only one)
 * @param outcomes which outcomes of a call count, from {@code countExceptions} and
 * {@code countWhen}
 */
public record AnnotatedLimit(String name, LimitSettings settings, Expression keyExpression, String origin,
		String suffix, CallOutcomes outcomes) {

	/**
	 * The limit name for a call.
	 * @param routeName the canonical route when the method is a web handler, or {@code null}
	 * @param method the invoked method
	 * @return the explicit name, or the route (or {@code Class.method}) plus the suffix
	 */
	public String nameFor(String routeName, Method method) {
		if (this.name != null) {
			return this.name;
		}
		String base = (routeName != null) ? routeName
				: method.getDeclaringClass().getSimpleName() + "." + method.getName();
		return base + this.suffix;
	}

}
