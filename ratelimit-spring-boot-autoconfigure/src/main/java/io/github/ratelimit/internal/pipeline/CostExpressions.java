package io.github.ratelimit.internal.pipeline;

import java.lang.reflect.Method;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.regex.Pattern;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.springframework.context.expression.MethodBasedEvaluationContext;
import org.springframework.core.DefaultParameterNameDiscoverer;
import org.springframework.core.ParameterNameDiscoverer;
import org.springframework.expression.EvaluationContext;
import org.springframework.expression.EvaluationException;
import org.springframework.expression.Expression;
import org.springframework.expression.ParseException;
import org.springframework.expression.spel.standard.SpelExpressionParser;
import org.springframework.expression.spel.support.StandardEvaluationContext;

import io.github.ratelimit.RateLimitConfigurationException;
import io.github.ratelimit.internal.core.LimitDefinition;

/**
 * The expressions of limits that settle costs after the call: checks them where they are
 * written (an annotation, a policy, a route), so that a bad one fails at startup naming
 * its place, and evaluates them for calls. An estimate over a call's arguments gives the
 * cost it reserves; an actual cost over its result gives what it settles. Either must give
 * a whole number not below 0: one that fails or gives something else is logged once and
 * treated as unknown (the limit's cost is reserved, the reservation stands).
 */
public final class CostExpressions {

	/** Returned when a cost is unknown. */
	public static final long UNKNOWN = -1;

	private static final SpelExpressionParser PARSER = new SpelExpressionParser();

	private static final ParameterNameDiscoverer PARAMETER_NAMES = new DefaultParameterNameDiscoverer();

	/** A number written as a literal, which can be checked before any call. */
	private static final Pattern LITERAL = Pattern.compile("-?\\s*\\d+(\\.\\d*)?[lLdDfF]?");

	/** A header name: an HTTP token. */
	private static final Pattern TOKEN = Pattern.compile("[!#$%&'*+.^_`|~0-9A-Za-z-]+");

	private static final Log logger = LogFactory.getLog(CostExpressions.class);

	private final Map<String, Expression> parsed = new ConcurrentHashMap<>();

	private final Set<String> failed = ConcurrentHashMap.newKeySet();

	/**
	 * Checks an estimate as written.
	 * @param text the expression, or {@code null}
	 * @param property where it is written, for the error
	 * @return the text, or {@code null} when blank
	 * @throws RateLimitConfigurationException when it is not a valid SpEL expression or a
	 * literal that is not a whole number from 0
	 */
	public static String checkEstimate(String text, String property) {
		return check(text, property, "Use an expression over the arguments by name or #request, such as \"#body.maxTokens\"");
	}

	/**
	 * Checks an actual cost expression as written.
	 * @param text the expression, or {@code null}
	 * @param property where it is written, for the error
	 * @return the text, or {@code null} when blank
	 * @throws RateLimitConfigurationException when it is not a valid SpEL expression or a
	 * literal that is not a whole number from 0
	 */
	public static String checkActualCost(String text, String property) {
		return check(text, property, "Use an expression over #result and the arguments, such as \"#result.usage.totalTokens\"");
	}

	/**
	 * Checks the name of an actual cost header.
	 * @param name the header name, or {@code null}
	 * @param property where it is written, for the error
	 * @return the name, trimmed, or {@code null} when blank
	 * @throws RateLimitConfigurationException when it is not a header name
	 */
	public static String checkHeader(String name, String property) {
		if (name == null || name.isBlank()) {
			return null;
		}
		String trimmed = name.trim();
		if (!TOKEN.matcher(trimmed).matches()) {
			throw new RateLimitConfigurationException(property, "'" + name + "' is not a header name",
					"Use a header name such as X-Tokens-Used");
		}
		return trimmed;
	}

	private static String check(String text, String property, String action) {
		if (text == null || text.isBlank()) {
			return null;
		}
		String trimmed = text.trim();
		try {
			PARSER.parseExpression(trimmed);
		}
		catch (ParseException ex) {
			throw new RateLimitConfigurationException(property,
					"'" + text + "' is not a valid SpEL expression: " + ex.getMessage(), action);
		}
		if (LITERAL.matcher(trimmed).matches() && cost(trimmed.replaceAll("\\s|[lLdDfF]$", "")) == UNKNOWN) {
			throw new RateLimitConfigurationException(property, "'" + text + "' is not a whole number from 0",
					"Use a cost of 0 or more, or an expression giving one");
		}
		return trimmed;
	}

	/**
	 * The cost a call reserves: its limit's estimate over the arguments and the request.
	 * @param definition the limit
	 * @param method the invoked method, or {@code null} for a route limit
	 * @param args the arguments (empty for a route limit)
	 * @param request the native request, or {@code null} outside web requests
	 * @return the estimate, or {@link #UNKNOWN} when the limit has none or it failed
	 */
	public long estimate(LimitDefinition definition, Method method, Object[] args, Object request) {
		String text = definition.settledCost().estimate();
		if (text == null) {
			return UNKNOWN;
		}
		StandardEvaluationContext context = (method != null)
				? new MethodBasedEvaluationContext(null, method, args, PARAMETER_NAMES) : new StandardEvaluationContext();
		if (context.lookupVariable("request") == null) {
			context.setVariable("request", request);
		}
		return evaluate(text, context, definition, "estimate");
	}

	/**
	 * The cost a call reserves: its limit's estimate over variables set already (a
	 * reactive handler's query parameters, form fields, path variables and request).
	 * @param definition the limit
	 * @param variables what the estimate may read
	 * @return the estimate, or {@link #UNKNOWN} when the limit has none or it failed
	 */
	public long estimate(LimitDefinition definition, EvaluationContext variables) {
		String text = definition.settledCost().estimate();
		return (text != null) ? evaluate(text, variables, definition, "estimate") : UNKNOWN;
	}

	/**
	 * The actual cost of a call that returned: its limit's actual cost expression over
	 * the result and the arguments.
	 * @param definition the limit
	 * @param method the invoked method
	 * @param args the arguments
	 * @param result what it returned (for a {@code Mono}, the value it emitted)
	 * @return the cost, or {@link #UNKNOWN} when the limit has no expression or it failed
	 */
	public long actualCost(LimitDefinition definition, Method method, Object[] args, Object result) {
		String text = definition.settledCost().actualCost();
		if (text == null) {
			return UNKNOWN;
		}
		MethodBasedEvaluationContext context = new MethodBasedEvaluationContext(null, method, args, PARAMETER_NAMES);
		context.setVariable("result", result);
		return evaluate(text, context, definition, "actual-cost");
	}

	private long evaluate(String text, EvaluationContext context, LimitDefinition definition, String property) {
		Object value;
		try {
			value = this.parsed.computeIfAbsent(text, PARSER::parseExpression).getValue(context);
		}
		catch (EvaluationException ex) {
			warnOnce(definition, property, text, ex.getMessage());
			return UNKNOWN;
		}
		long cost = cost(value);
		if (cost == UNKNOWN) {
			warnOnce(definition, property, text, "gave " + value + ", not a whole number from 0");
		}
		return cost;
	}

	private void warnOnce(LimitDefinition definition, String property, String text, String problem) {
		if (this.failed.add(definition.limit().name() + "|" + property)) {
			logger.warn(property + " '" + text + "' of limit '" + definition.limit().name() + "' failed (" + problem
					+ "); " + ("estimate".equals(property) ? "reserving its cost instead"
							: "its reservation stands"));
		}
	}

	/**
	 * A cost from what an expression or a header gave.
	 * @param value a number, or text spelling one
	 * @return the cost, or {@link #UNKNOWN} when it is not a whole number from 0
	 */
	public static long cost(Object value) {
		try {
			BigDecimal number;
			if (value instanceof BigDecimal decimal) {
				number = decimal;
			}
			else if (value instanceof BigInteger integer) {
				number = new BigDecimal(integer);
			}
			else if (value instanceof Long || value instanceof Integer || value instanceof Short
					|| value instanceof Byte) {
				return (((Number) value).longValue() >= 0) ? ((Number) value).longValue() : UNKNOWN;
			}
			else if (value instanceof Number other) {
				number = new BigDecimal(other.toString());
			}
			else if (value instanceof CharSequence text) {
				number = new BigDecimal(text.toString().trim());
			}
			else {
				return UNKNOWN;
			}
			return (number.signum() >= 0) ? number.longValueExact() : UNKNOWN;
		}
		catch (NumberFormatException | ArithmeticException ex) {
			return UNKNOWN;
		}
	}

}
