package io.github.ratelimit.internal.pipeline;

import java.lang.reflect.Method;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.springframework.context.expression.MethodBasedEvaluationContext;
import org.springframework.core.DefaultParameterNameDiscoverer;
import org.springframework.core.ParameterNameDiscoverer;
import org.springframework.expression.EvaluationContext;
import org.springframework.expression.EvaluationException;

import io.github.ratelimit.RateLimited;
import io.github.ratelimit.internal.core.Identities;
import io.github.ratelimit.internal.core.LimitDefinition;
import io.github.ratelimit.internal.core.LimitResolver;

/**
 * The {@link RateLimited} limits of methods, resolved against {@code application.yml}
 * once per limit and name, and the identity of a call for each of them (its key
 * expression, or the key chain of its context).
 */
public final class MethodLimits {

	private static final ParameterNameDiscoverer PARAMETER_NAMES = new DefaultParameterNameDiscoverer();

	private static final Log logger = LogFactory.getLog(MethodLimits.class);

	private final RateLimitedMethods methods;

	private final LimitResolver resolver;

	private final Map<DefinitionKey, LimitDefinition> definitions = new ConcurrentHashMap<>();

	private final Set<AnnotatedLimit> failedExpressions = ConcurrentHashMap.newKeySet();

	/**
	 * Creates the method limits.
	 * @param methods finds the annotations
	 * @param resolver resolves the effective limits
	 */
	public MethodLimits(RateLimitedMethods methods, LimitResolver resolver) {
		this.methods = methods;
		this.resolver = resolver;
	}

	/**
	 * The annotated limits applying to a method invoked on a target class.
	 * @param method the method
	 * @param targetClass the class of the target, or {@code null}
	 * @return the limits, empty when the method is not rate limited
	 */
	public List<AnnotatedLimit> find(Method method, Class<?> targetClass) {
		return this.methods.find(method, targetClass);
	}

	/**
	 * The effective definition of an annotated limit under a name, resolved once.
	 * @param limit the annotated limit
	 * @param name the limit name
	 * @return the definition
	 */
	public LimitDefinition definition(AnnotatedLimit limit, String name) {
		return this.definitions.computeIfAbsent(new DefinitionKey(limit, name),
				(key) -> this.resolver.resolve(name, limit.settings(), limit.origin()));
	}

	/**
	 * Resolves an annotated limit under a name and records that it guards a route.
	 * @param limit the annotated limit
	 * @param name the limit name
	 * @param route the route of the handler, such as {@code GET /orders/{id}}
	 * @return the definition
	 */
	public LimitDefinition guard(AnnotatedLimit limit, String name, String route) {
		LimitDefinition definition = definition(limit, name);
		this.resolver.guards(name, limit.origin(), route);
		return definition;
	}

	/**
	 * Whether some of a method's limits settle over what it returns ({@code actualCost}),
	 * as far as can be told without the route its unnamed limits are named after: set on
	 * the annotation, or on the policy a named limit takes.
	 * @param limits the method's limits
	 * @return whether the method's result may be needed once it completes
	 */
	public boolean settleOverResult(List<AnnotatedLimit> limits) {
		for (AnnotatedLimit limit : limits) {
			if (limit.settings().actualCost() != null
					|| (limit.name() != null && definition(limit, limit.name()).settledCost().actualCost() != null)) {
				return true;
			}
		}
		return false;
	}

	/**
	 * The identity of a call for a limit: its key expression over the method arguments
	 * (and {@code #request}) when it has one that gives a value, otherwise its key chain
	 * in the call's context.
	 * @param limit the annotated limit
	 * @param definition its definition
	 * @param method the invoked method
	 * @param args the arguments
	 * @param context where the call runs
	 * @return the identity
	 */
	public String identity(AnnotatedLimit limit, LimitDefinition definition, Method method, Object[] args,
			CallContext context) {
		if (limit.keyExpression() == null) {
			return context.identity(definition.limit().name(), definition.key());
		}
		MethodBasedEvaluationContext evaluation = new MethodBasedEvaluationContext(null, method, args, PARAMETER_NAMES);
		if (!hasParameterNamed(method, "request")) {
			evaluation.setVariable("request", context.request());
		}
		String identity = evaluate(limit, definition, evaluation);
		return (identity != null) ? identity : context.identity(definition.limit().name(), definition.key());
	}

	/**
	 * The identity a limit's key expression gives in an evaluation context.
	 * @param limit the annotated limit
	 * @param definition its definition
	 * @param evaluation the variables the expression may read
	 * @return the identity, or {@code null} when the limit has no key expression or it
	 * gives no value (the key chain decides then)
	 */
	public String evaluate(AnnotatedLimit limit, LimitDefinition definition, EvaluationContext evaluation) {
		if (limit.keyExpression() == null) {
			return null;
		}
		try {
			Object value = limit.keyExpression().getValue(evaluation);
			if (value != null && !value.toString().isEmpty()) {
				return Identities.expression(value.toString());
			}
		}
		catch (EvaluationException ex) {
			if (this.failedExpressions.add(limit)) {
				logger.warn("keyExpression of " + limit.origin() + " failed (" + ex.getMessage()
						+ "); using the key chain " + definition.key() + " instead");
			}
		}
		return null;
	}

	/** A method argument named like a variable wins over the variable. */
	private static boolean hasParameterNamed(Method method, String name) {
		String[] names = PARAMETER_NAMES.getParameterNames(method);
		if (names != null) {
			for (String parameter : names) {
				if (name.equals(parameter)) {
					return true;
				}
			}
		}
		return false;
	}

	private record DefinitionKey(AnnotatedLimit limit, String name) {
	}

}
