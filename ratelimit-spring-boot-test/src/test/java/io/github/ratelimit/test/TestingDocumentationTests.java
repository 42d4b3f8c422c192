package io.github.ratelimit.test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import javax.tools.Diagnostic;
import javax.tools.DiagnosticCollector;
import javax.tools.JavaCompiler;
import javax.tools.JavaFileObject;
import javax.tools.StandardJavaFileManager;
import javax.tools.ToolProvider;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Every Java example of "Testing your limits" ({@code docs/testing.md}) compiles as
 * written, imports included, against the test module and Spring Boot's test starters.
 * The examples' behaviour is run by {@code servlet.ThingsControllerTests} and the
 * {@code ThingsApiTests}, which mirror them.
 */
class TestingDocumentationTests {

	private static final Path PAGE = Path.of("../docs/testing.md");

	private static final Pattern JAVA_BLOCK = Pattern.compile("```java\\n(.*?)```", Pattern.DOTALL);

	private static final Pattern CLASS_NAME = Pattern.compile("^class (\\w+)", Pattern.MULTILINE);

	/** The quick start's controller, which the examples test; the page does not repeat it. */
	private static final String THINGS_CONTROLLER = """
			@org.springframework.web.bind.annotation.RestController
			class ThingsController {
			}
			""";

	@Test
	void everyJavaExampleCompilesAsWritten(@TempDir Path sources) throws IOException {
		List<String> examples = examples();
		assertThat(examples).hasSizeGreaterThanOrEqualTo(3);
		for (String example : examples) {
			Matcher className = CLASS_NAME.matcher(example);
			assertThat(className.find()).as("a top-level class in%n%s", example).isTrue();
			Path directory = Files.createDirectories(sources.resolve(className.group(1)));
			Files.writeString(directory.resolve(className.group(1) + ".java"), example);
			Files.writeString(directory.resolve("ThingsController.java"), THINGS_CONTROLLER);
			assertThat(compile(directory)).as("compiling%n%s", example).isEmpty();
		}
	}

	private static List<String> examples() throws IOException {
		Matcher blocks = JAVA_BLOCK.matcher(Files.readString(PAGE));
		List<String> examples = new ArrayList<>();
		while (blocks.find()) {
			examples.add(blocks.group(1));
		}
		return examples;
	}

	/** Compiles the sources of a directory on this JVM's class path; returns the errors. */
	private static List<String> compile(Path directory) throws IOException {
		JavaCompiler compiler = ToolProvider.getSystemJavaCompiler();
		DiagnosticCollector<JavaFileObject> diagnostics = new DiagnosticCollector<>();
		try (StandardJavaFileManager files = compiler.getStandardFileManager(diagnostics, Locale.ROOT, null);
				var paths = Files.list(directory)) {
			Iterable<? extends JavaFileObject> units = files.getJavaFileObjectsFromPaths(paths.toList());
			List<String> options = List.of("-proc:none", "-d", directory.toString(), "-classpath",
					System.getProperty("java.class.path"));
			compiler.getTask(null, files, diagnostics, options, null, units).call();
		}
		return diagnostics.getDiagnostics()
			.stream()
			.filter((diagnostic) -> diagnostic.getKind() == Diagnostic.Kind.ERROR)
			.map((diagnostic) -> diagnostic.getLineNumber() + ": " + diagnostic.getMessage(Locale.ROOT))
			.toList();
	}

}
