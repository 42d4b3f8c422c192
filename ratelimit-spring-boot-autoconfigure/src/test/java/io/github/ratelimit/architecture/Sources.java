package io.github.ratelimit.architecture;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * The main sources of the published modules, read as text: the architecture tests pin
 * what the files say (imports, declarations, sizes) rather than what a class loader sees.
 */
final class Sources {

	/** The published modules whose main sources make up the library. */
	static final List<String> MODULES = List.of("ratelimit-core", "ratelimit-redis",
			"ratelimit-jdbc", "ratelimit-spring-boot-autoconfigure", "ratelimit-spring-boot-test");

	private static final Pattern IMPORT = Pattern.compile("^import (?:static )?([\\w.]+)(?:\\.\\*)?;", Pattern.MULTILINE);

	private Sources() {
	}

	static Path root(String module) {
		return Path.of("..", module, "src/main/java");
	}

	/** Every main source file of the published modules. */
	static List<Path> files() {
		return MODULES.stream().flatMap((module) -> files(root(module)).stream()).toList();
	}

	static List<Path> files(Path directory) {
		if (!Files.isDirectory(directory)) {
			return List.of();
		}
		try (Stream<Path> files = Files.walk(directory)) {
			return files.filter((file) -> file.toString().endsWith(".java")).sorted().toList();
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

	/** The package a source file declares. */
	static String packageOf(Path file) {
		Matcher matcher = Pattern.compile("^package ([\\w.]+);", Pattern.MULTILINE).matcher(read(file));
		if (!matcher.find()) {
			throw new IllegalStateException(file + " declares no package");
		}
		return matcher.group(1);
	}

	/** What the files of one package, in any module, import. */
	static List<String> imports(String packageName) {
		return files().stream()
			.filter((file) -> packageOf(file).equals(packageName))
			.flatMap((file) -> IMPORT.matcher(read(file)).results().map((result) -> result.group(1)))
			.toList();
	}

	/** What the files of one module import. */
	static List<String> moduleImports(String module) {
		return files(root(module)).stream()
			.flatMap((file) -> IMPORT.matcher(read(file)).results().map((result) -> result.group(1)))
			.toList();
	}

	static String read(Path file) {
		try {
			return Files.readString(file);
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

}
