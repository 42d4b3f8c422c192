package io.github.ratelimit.architecture;

import java.lang.reflect.Constructor;
import java.lang.reflect.Parameter;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Pins the shape of the classes a newcomer must read: none is over 500 lines, and none
 * outside records is built by a constructor of more than four parameters (a builder or a
 * settings record names what each value is).
 */
class ClassShapeTests {

	private static final int MAX_LINES = 500;

	private static final int MAX_CONSTRUCTOR_PARAMETERS = 4;

	/** The modules whose classes are on this module's test class path. */
	private static final List<String> LOADED_MODULES = List.of("ratelimit-core", "ratelimit-redis",
			"ratelimit-jdbc", "ratelimit-spring-boot-autoconfigure");

	@Test
	void noMainClassIsOver500Lines() {
		Map<String, Long> over = new TreeMap<>();
		for (Path file : Sources.files()) {
			long lines = Sources.read(file).lines().count();
			if (lines > MAX_LINES) {
				over.put(file.getFileName().toString(), lines);
			}
		}
		assertThat(over).isEmpty();
	}

	@Test
	void noConstructorOutsideRecordsTakesMoreThanFourParameters() throws ClassNotFoundException {
		List<String> offenders = new ArrayList<>();
		for (String module : LOADED_MODULES) {
			for (Path file : Sources.files(Sources.root(module))) {
				String name = file.getFileName().toString().replace(".java", "");
				if (name.equals("package-info")) {
					continue;
				}
				Class<?> type = Class.forName(Sources.packageOf(file) + "." + name, false, getClass().getClassLoader());
				collect(type, offenders);
			}
		}
		assertThat(offenders).isEmpty();
	}

	@Test
	void countsTheParametersAConstructorDeclares() throws ClassNotFoundException {
		List<String> offenders = new ArrayList<>();
		collect(Class.forName(Positional.class.getName()), offenders);
		assertThat(offenders).containsExactly(Positional.class.getName() + "(5 parameters)");
	}

	private static void collect(Class<?> type, List<String> offenders) {
		if (!type.isRecord() && !type.isSynthetic() && !type.isAnonymousClass()) {
			for (Constructor<?> constructor : type.getDeclaredConstructors()) {
				long declared = Arrays.stream(constructor.getParameters())
					.filter((parameter) -> !isImplicit(parameter))
					.count();
				if (declared > MAX_CONSTRUCTOR_PARAMETERS) {
					offenders.add(type.getName() + "(" + declared + " parameters)");
				}
			}
		}
		for (Class<?> nested : type.getDeclaredClasses()) {
			collect(nested, offenders);
		}
	}

	private static boolean isImplicit(Parameter parameter) {
		return parameter.isImplicit() || parameter.isSynthetic();
	}

	static final class Positional {

		Positional(int a, int b, int c, int d, int e) {
		}

		Positional(int a, int b) {
		}

	}

}
