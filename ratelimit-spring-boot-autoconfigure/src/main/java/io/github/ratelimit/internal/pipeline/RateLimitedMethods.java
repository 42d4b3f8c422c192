package io.github.ratelimit.internal.pipeline;

import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.time.DateTimeException;
import java.time.Duration;
import java.time.ZoneId;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.Collectors;

import org.springframework.aop.support.AopUtils;
import org.springframework.boot.convert.DurationStyle;
import org.springframework.core.MethodClassKey;
import org.springframework.core.annotation.MergedAnnotation;
import org.springframework.core.annotation.MergedAnnotations;
import org.springframework.core.annotation.MergedAnnotations.SearchStrategy;
import org.springframework.expression.Expression;
import org.springframework.expression.ParseException;
import org.springframework.expression.spel.standard.SpelExpressionParser;
import org.springframework.util.ClassUtils;

import io.github.ratelimit.RateLimitConfigurationException;
import io.github.ratelimit.RateLimited;
import io.github.ratelimit.internal.core.CountedOutcomes;
import io.github.ratelimit.internal.core.LimitSettings;

/**
 * Finds the {@link RateLimited} annotations that apply to a method (on the method and on
 * its type, repeated or not) and parses them once. Parsing errors (an unparseable period,
 * an invalid key expression) name the annotated method.
 */
public final class RateLimitedMethods {

	private static final SpelExpressionParser PARSER = new SpelExpressionParser();

	private final Map<MethodClassKey, List<AnnotatedLimit>> cache = new ConcurrentHashMap<>();

	/** Whether some method looked at so far carries a limit; never goes back to {@code false}. */
	private volatile boolean found;

	/**
	 * The limits applying to a method invoked on a target class.
	 * @param method the method
	 * @param targetClass the class of the target, or {@code null}
	 * @return the limits, empty when the method is not rate limited
	 * @throws RateLimitConfigurationException when an annotation is invalid
	 */
	public List<AnnotatedLimit> find(Method method, Class<?> targetClass) {
		List<AnnotatedLimit> limits = this.cache.computeIfAbsent(new MethodClassKey(method, targetClass),
				(key) -> parse(method, targetClass));
		if (!limits.isEmpty() && !this.found) {
			this.found = true;
		}
		return limits;
	}

	/**
	 * Whether some method looked at so far carries a limit. Every bean's methods are
	 * looked at as it is proxied and again once every singleton exists (to validate
	 * them), before a web server takes requests: until one is found, no call made while
	 * a request is handled is limited, and a request's route stage is all there is.
	 * @return whether a limited method was found
	 */
	public boolean anyFound() {
		return this.found;
	}

	/**
	 * Whether any limit applies to the method.
	 * @param method the method
	 * @param targetClass the class of the target
	 * @return whether it is rate limited
	 */
	public boolean isRateLimited(Method method, Class<?> targetClass) {
		return !find(method, targetClass).isEmpty();
	}

	private static List<AnnotatedLimit> parse(Method method, Class<?> targetClass) {
		Class<?> userClass = (targetClass != null) ? ClassUtils.getUserClass(targetClass) : method.getDeclaringClass();
		Method specific = AopUtils.getMostSpecificMethod(method, userClass);
		if (specific.getDeclaringClass() == Object.class) {
			return List.of();
		}
		List<MergedAnnotation<RateLimited>> found = new ArrayList<>();
		MergedAnnotations.from(specific, SearchStrategy.TYPE_HIERARCHY).stream(RateLimited.class).forEach(found::add);
		if (Modifier.isPublic(specific.getModifiers())) {
			MergedAnnotations.from(userClass, SearchStrategy.TYPE_HIERARCHY).stream(RateLimited.class).forEach(found::add);
		}
		if (found.isEmpty()) {
			return List.of();
		}
		String where = "@RateLimited on " + userClass.getName() + "." + specific.getName()
				+ Arrays.stream(specific.getParameterTypes()).map(Class::getSimpleName).collect(Collectors.joining(", ", "(", ")"));
		long unnamed = found.stream().filter((annotation) -> nameOf(annotation, where).isEmpty()).count();
		List<AnnotatedLimit> limits = new ArrayList<>(found.size());
		int unnamedIndex = 0;
		for (int i = 0; i < found.size(); i++) {
			MergedAnnotation<RateLimited> annotation = found.get(i);
			String origin = (found.size() > 1) ? where + " #" + (i + 1) : where;
			String name = nameOf(annotation, origin);
			String suffix = "";
			if (name.isEmpty() && unnamed > 1) {
				suffix = "#" + (++unnamedIndex);
			}
			limits.add(toLimit(annotation, name.isEmpty() ? null : name, origin, suffix));
		}
		return List.copyOf(limits);
	}

	/**
	 * The limit's name from {@code name} or its alias {@code value}: the annotation stays
	 * free of Spring, so the alias is resolved here rather than by {@code @AliasFor}.
	 */
	static String nameOf(MergedAnnotation<RateLimited> annotation, String origin) {
		String name = annotation.getString("name");
		String value = annotation.getString("value");
		if (!name.isEmpty() && !value.isEmpty() && !name.equals(value)) {
			throw new RateLimitConfigurationException(origin, "name '" + name + "' and value '" + value + "' differ",
					"Set one of them: value is an alias of name");
		}
		return name.isEmpty() ? value : name;
	}

	private static AnnotatedLimit toLimit(MergedAnnotation<RateLimited> annotation, String name, String origin,
			String suffix) {
		long capacity = annotation.getLong("capacity");
		long refill = annotation.getLong("refillTokens");
		Duration period;
		String periodText = annotation.getString("period");
		try {
			period = DurationStyle.detectAndParse(periodText);
		}
		catch (IllegalArgumentException ex) {
			throw new RateLimitConfigurationException(origin + " (period)", "'" + periodText + "' is not a duration",
					"Use a duration such as \"1s\", \"15m\" or \"PT1H\"");
		}
		Duration maxWait = null;
		String maxWaitText = annotation.getString("maxWait");
		if (!maxWaitText.isBlank()) {
			try {
				maxWait = DurationStyle.detectAndParse(maxWaitText.trim());
			}
			catch (IllegalArgumentException ex) {
				throw new RateLimitConfigurationException(origin + " (maxWait)", "'" + maxWaitText + "' is not a duration",
						"Use a duration such as \"2s\" or \"500ms\", or \"0\" to never wait");
			}
		}
		ZoneId timeZone = null;
		String timeZoneText = annotation.getString("timeZone");
		if (!timeZoneText.isBlank()) {
			try {
				timeZone = ZoneId.of(timeZoneText.trim());
			}
			catch (DateTimeException ex) {
				throw new RateLimitConfigurationException(origin + " (timeZone)",
						"'" + timeZoneText + "' is not a time zone: " + ex.getMessage(),
						"Use a region such as \"Europe/Berlin\" or \"America/New_York\", or an offset such as \"+02:00\"");
			}
		}
		String expressionText = annotation.getString("keyExpression");
		Expression expression = null;
		if (!expressionText.isBlank()) {
			try {
				expression = PARSER.parseExpression(expressionText);
			}
			catch (ParseException ex) {
				throw new RateLimitConfigurationException(origin + " (keyExpression)",
						"'" + expressionText + "' is not a valid SpEL expression: " + ex.getMessage(),
						"Use an expression over the method arguments by name, such as \"#username\"");
			}
		}
		CountedOutcomes countStatuses;
		try {
			countStatuses = CountedStatuses.parse(List.of(annotation.getStringArray("countStatuses")));
		}
		catch (IllegalArgumentException ex) {
			throw new RateLimitConfigurationException(origin + " (countStatuses)", ex.getMessage(),
					"Use status codes such as \"401\" and \"403\", or classes such as \"4xx\" and \"5xx\"");
		}
		String countWhenText = annotation.getString("countWhen");
		Expression countWhen = null;
		if (!countWhenText.isBlank()) {
			try {
				countWhen = PARSER.parseExpression(countWhenText);
			}
			catch (ParseException ex) {
				throw new RateLimitConfigurationException(origin + " (countWhen)",
						"'" + countWhenText + "' is not a valid SpEL expression: " + ex.getMessage(),
						"Use a condition over #result and the arguments by name, such as \"#result == false\"");
			}
		}
		@SuppressWarnings("unchecked")
		Class<? extends Throwable>[] countExceptions = (Class<? extends Throwable>[]) annotation
			.getClassArray("countExceptions");
		CallOutcomes outcomes = (countExceptions.length == 0 && countWhen == null) ? CallOutcomes.ALL
				: new CallOutcomes(List.of(countExceptions), countWhen);
		// attributes left at their defaults are not set here, so that operators see them as defaults
		LimitSettings settings = LimitSettings.builder()
			.algorithm(unlessDefault(annotation, "algorithm"))
			.capacity((capacity != 0) ? capacity : null)
			.refillTokens((refill != 0) ? refill : null)
			.period((unlessDefault(annotation, "period") != null) ? period : null)
			.cost(unlessDefault(annotation, "cost"))
			.key(List.of(annotation.getEnumArray("key", io.github.ratelimit.KeySource.class)))
			.keyExpression(expressionText)
			.maxWait(maxWait)
			.calendar(unlessDefault(annotation, "calendar"))
			.timeZone(timeZone)
			.unit(annotation.getString("unit"))
			.countStatuses(countStatuses.countsAll() ? null : countStatuses)
			.estimate(CostExpressions.checkEstimate(annotation.getString("estimate"), origin + " (estimate)"))
			.actualCost(CostExpressions.checkActualCost(annotation.getString("actualCost"), origin + " (actualCost)"))
			.actualCostHeader(
					CostExpressions.checkHeader(annotation.getString("actualCostHeader"), origin + " (actualCostHeader)"))
			.build();
		return new AnnotatedLimit(name, settings, expression, origin, suffix, outcomes);
	}

	/** The value of an attribute, or {@code null} when it is the attribute's default. */
	@SuppressWarnings("unchecked")
	private static <T> T unlessDefault(MergedAnnotation<RateLimited> annotation, String attribute) {
		Object value = annotation.getValue(attribute).orElse(null);
		Object fallback = annotation.getDefaultValue(attribute).orElse(null);
		return (value == null || value.equals(fallback)) ? null : (T) value;
	}

}
