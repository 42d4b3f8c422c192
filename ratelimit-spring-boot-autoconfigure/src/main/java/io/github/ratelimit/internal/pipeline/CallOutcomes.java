package io.github.ratelimit.internal.pipeline;

import java.lang.reflect.Method;
import java.util.List;

import org.springframework.context.expression.MethodBasedEvaluationContext;
import org.springframework.core.DefaultParameterNameDiscoverer;
import org.springframework.core.ParameterNameDiscoverer;
import org.springframework.expression.Expression;
import org.springframework.expression.spel.standard.SpelExpressionParser;

import io.github.ratelimit.RateLimited;
import io.github.ratelimit.internal.core.CountedOutcomes;
import io.github.ratelimit.internal.core.LimitDefinition;

/**
 * Which outcomes of a method call count against a limit, from
 * {@link RateLimited#countExceptions()} and {@link RateLimited#countWhen()}: a thrown
 * exception counts when it is one of {@code exceptions}, a returned value when
 * {@code when} is {@code true} for it. {@link #ALL} (neither set) counts every call.
 *
 * @param exceptions the exception types that count, empty when thrown exceptions do not
 * count (unless both are empty)
 * @param when the condition over {@code #result} and the arguments, or {@code null} when
 * returned values do not count (unless both are unset)
 */
public record CallOutcomes(List<Class<? extends Throwable>> exceptions, Expression when) {

	/** Counts every call. */
	public static final CallOutcomes ALL = new CallOutcomes(List.of(), null);

	/**
	 * Counts no call: what it took is given back when it completes, whatever its outcome,
	 * as for a concurrency limit.
	 */
	public static final CallOutcomes NONE = new CallOutcomes(List.of(),
			new SpelExpressionParser().parseExpression("false"));

	private static final ParameterNameDiscoverer PARAMETER_NAMES = new DefaultParameterNameDiscoverer();

	public CallOutcomes {
		exceptions = List.copyOf(exceptions);
	}

	/**
	 * Which outcomes count for a call of a bean method that is not a web handler (a
	 * handler's final response status decides instead, by
	 * {@link LimitDefinition#countStatuses()}): none for a limit whose permits are held
	 * while the call runs, otherwise those its annotation names.
	 * @param limit the annotated limit
	 * @param definition its effective definition
	 * @return the outcomes that count
	 */
	public static CallOutcomes of(AnnotatedLimit limit, LimitDefinition definition) {
		return (definition.countStatuses() == CountedOutcomes.NONE) ? NONE : limit.outcomes();
	}

	/**
	 * Whether every call counts, so that nothing is ever given back.
	 * @return whether neither exceptions nor a condition are set
	 */
	public boolean countsAll() {
		return this.exceptions.isEmpty() && this.when == null;
	}

	/**
	 * Whether a call that threw counts.
	 * @param failure what it threw
	 * @return whether it counts
	 */
	public boolean countsThrown(Throwable failure) {
		if (this == NONE) {
			return false;
		}
		if (countsAll()) {
			return true;
		}
		for (Class<? extends Throwable> type : this.exceptions) {
			if (type.isInstance(failure)) {
				return true;
			}
		}
		return false;
	}

	/**
	 * Whether a call that returned counts: the condition is {@code true} for its value.
	 * @param method the invoked method
	 * @param args the arguments
	 * @param result the returned value (for a {@code Mono}, the value it emitted)
	 * @return whether it counts
	 * @throws org.springframework.expression.EvaluationException when the condition fails
	 */
	public boolean countsReturned(Method method, Object[] args, Object result) {
		if (this == NONE) {
			return false;
		}
		if (countsAll()) {
			return true;
		}
		if (this.when == null) {
			return false;
		}
		MethodBasedEvaluationContext context = new MethodBasedEvaluationContext(null, method, args, PARAMETER_NAMES);
		context.setVariable("result", result);
		return Boolean.TRUE.equals(this.when.getValue(context, Boolean.class));
	}

}
