package io.github.ratelimit.autoconfigure;

import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

import org.springframework.boot.context.properties.bind.DataObjectPropertyName;
import org.springframework.boot.context.properties.source.ConfigurationPropertyName;
import org.springframework.boot.context.properties.source.ConfigurationPropertyName.Form;
import org.springframework.core.ResolvableType;

/**
 * The names {@link RateLimitProperties}, {@link RateLimitClientProperties},
 * {@link RateLimitJdbcProperties} and {@link RateLimitOverloadProperties} bind, read from their getters, and the nearest of them to
 * a name they do not bind: what a startup failure suggests for a misspelled property.
 */
final class RateLimitPropertyNames {

	static final ConfigurationPropertyName PREFIX = ConfigurationPropertyName.of("ratelimit");

	/** The classes bound under {@code ratelimit}, whose nested classes are groups too. */
	private static final Set<Class<?>> GROUPS = Set.of(RateLimitProperties.class, RateLimitClientProperties.class,
			RateLimitJdbcProperties.class, RateLimitOverloadProperties.class, RateLimitPolicyProperties.class,
			RateLimitRouteProperties.class);

	/** The group bound to {@code ratelimit.client} by a properties class of its own. */
	private static final String CLIENT = "client";

	/** The group bound to {@code ratelimit.jdbc} by a properties class of its own. */
	private static final String JDBC = "jdbc";

	/** The group bound to {@code ratelimit.overload} by a properties class of its own. */
	private static final String OVERLOAD = "overload";

	private RateLimitPropertyNames() {
	}

	/**
	 * Describes a name under {@code ratelimit} that binds to nothing: what the nearest
	 * known property is, or the properties known where it stands when none is near.
	 * @param unknown the unbound name
	 * @return for example {@code ratelimit.policies.exports.capcity is not a known
	 * property; did you mean ratelimit.policies.exports.capacity?}
	 */
	static String describeUnknown(ConfigurationPropertyName unknown) {
		String problem = problem(unknown);
		return (problem != null) ? problem : unknown + " is not a known property";
	}

	/**
	 * Whether a name under {@code ratelimit} names a property {@link RateLimitProperties}
	 * binds: an element of any list and an entry of any map count, whether or not a source
	 * of higher precedence replaced that list or map.
	 * @param name a name under {@code ratelimit}
	 * @return whether it is known
	 */
	static boolean isKnown(ConfigurationPropertyName name) {
		return problem(name) == null;
	}

	private static String problem(ConfigurationPropertyName unknown) {
		String text = unknown + " is not a known property";
		ResolvableType type = ResolvableType.forClass(RateLimitProperties.class);
		for (int i = PREFIX.getNumberOfElements(); i < unknown.getNumberOfElements(); i++) {
			Class<?> raw = type.resolve(Object.class);
			if (Map.class.isAssignableFrom(raw)) {
				// this element is a key of the map: a policy, plan or limit name
				type = type.asMap().getGeneric(1);
				continue;
			}
			if (Collection.class.isAssignableFrom(raw)) {
				if (!unknown.isNumericIndex(i)) {
					return text + "; " + unknown.chop(i) + " is a list, indexed from 0";
				}
				type = type.asCollection().getGeneric(0);
				continue;
			}
			Map<String, Property> properties = propertiesOf(raw);
			if (raw == RateLimitProperties.class) {
				properties.put(CLIENT, new Property(CLIENT, ResolvableType.forClass(RateLimitClientProperties.class)));
				properties.put(JDBC, new Property(JDBC, ResolvableType.forClass(RateLimitJdbcProperties.class)));
				properties.put(OVERLOAD,
						new Property(OVERLOAD, ResolvableType.forClass(RateLimitOverloadProperties.class)));
			}
			if (properties.isEmpty()) {
				// below a value
				return text;
			}
			String element = unknown.getElement(i, Form.UNIFORM);
			Property property = properties.get(element);
			if (property != null) {
				type = property.type();
				continue;
			}
			String nearest = nearest(element, properties);
			if (nearest != null) {
				return text + "; did you mean " + replace(unknown, i, nearest) + "?";
			}
			List<String> known = new ArrayList<>();
			properties.values().forEach((candidate) -> known.add(candidate.name()));
			return text + "; the properties of " + unknown.chop(i) + " are " + String.join(", ", known);
		}
		return null;
	}

	/**
	 * The bean properties of a group by uniform name (lower case, without dashes), read
	 * from its public getters; none for a value type.
	 */
	private static Map<String, Property> propertiesOf(Class<?> type) {
		Map<String, Property> properties = new TreeMap<>();
		if (!isPropertiesGroup(type)) {
			return properties;
		}
		for (Method method : type.getMethods()) {
			String name = getterName(method);
			if (name != null) {
				String dashed = DataObjectPropertyName.toDashedForm(name);
				properties.put(ConfigurationPropertyName.of(dashed).getElement(0, Form.UNIFORM),
						new Property(dashed, ResolvableType.forMethodReturnType(method)));
			}
		}
		return properties;
	}

	/** Whether the type is one of the bound classes or one of their nested groups, rather than a value. */
	private static boolean isPropertiesGroup(Class<?> type) {
		for (Class<?> enclosing = type; enclosing != null; enclosing = enclosing.getEnclosingClass()) {
			if (GROUPS.contains(enclosing)) {
				return !type.isEnum();
			}
		}
		return false;
	}

	private static String getterName(Method method) {
		if (method.getParameterCount() != 0 || Modifier.isStatic(method.getModifiers())
				|| method.getDeclaringClass() == Object.class) {
			return null;
		}
		String name = method.getName();
		if (name.startsWith("get") && name.length() > 3) {
			return Character.toLowerCase(name.charAt(3)) + name.substring(4);
		}
		if (name.startsWith("is") && name.length() > 2 && method.getReturnType() == boolean.class) {
			return Character.toLowerCase(name.charAt(2)) + name.substring(3);
		}
		return null;
	}

	/** The known name closest to the unknown one, if it is a likely misspelling of it. */
	private static String nearest(String element, Map<String, Property> properties) {
		String nearest = null;
		int best = Integer.MAX_VALUE;
		for (Map.Entry<String, Property> candidate : properties.entrySet()) {
			int distance = distance(element, candidate.getKey());
			if (distance < best) {
				best = distance;
				nearest = candidate.getValue().name();
			}
		}
		return (best <= Math.max(2, element.length() / 3)) ? nearest : null;
	}

	/** Levenshtein distance: the fewest insertions, deletions and substitutions from a to b. */
	static int distance(String a, String b) {
		int[] previous = new int[b.length() + 1];
		int[] current = new int[b.length() + 1];
		for (int j = 0; j <= b.length(); j++) {
			previous[j] = j;
		}
		for (int i = 1; i <= a.length(); i++) {
			current[0] = i;
			for (int j = 1; j <= b.length(); j++) {
				int substitution = previous[j - 1] + ((a.charAt(i - 1) == b.charAt(j - 1)) ? 0 : 1);
				current[j] = Math.min(substitution, Math.min(previous[j], current[j - 1]) + 1);
			}
			int[] swap = previous;
			previous = current;
			current = swap;
		}
		return previous[b.length()];
	}

	/** The name with its element at index replaced, the elements after it kept as they were. */
	private static ConfigurationPropertyName replace(ConfigurationPropertyName name, int index, String element) {
		return name.chop(index).append(element).append(name.subName(index + 1));
	}

	private record Property(String name, ResolvableType type) {
	}

}
