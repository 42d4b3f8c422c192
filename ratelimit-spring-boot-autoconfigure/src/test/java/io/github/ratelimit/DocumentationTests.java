package io.github.ratelimit;

import java.beans.PropertyDescriptor;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.reflect.ParameterizedType;
import java.lang.reflect.Type;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.beans.BeanUtils;

import io.github.ratelimit.autoconfigure.RateLimitClientProperties;
import io.github.ratelimit.autoconfigure.RateLimitOverloadProperties;
import io.github.ratelimit.autoconfigure.RateLimitPolicyProperties;
import io.github.ratelimit.autoconfigure.RateLimitProperties;
import io.github.ratelimit.autoconfigure.RateLimitRouteProperties;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Guards the documentation against drifting from the code and from itself: every
 * property documented once in the configuration reference, every relative link in the
 * README and the reference pointing at a file and heading that exist, and the README
 * keeping the anchors its readers have bookmarked.
 */
class DocumentationTests {

	private static final Path ROOT = Path.of("..");

	private static final Path CONFIGURATION = ROOT.resolve("docs/configuration.md");

	private static final Path METADATA = Path.of("target/classes/META-INF/spring-configuration-metadata.json");

	/**
	 * A table row whose first cell names a property: {@code | `ratelimit.store` | ...}.
	 */
	private static final Pattern PROPERTY_ROW = Pattern
		.compile("^\\|\\s*`((?:ratelimit|management\\.endpoint\\.ratelimits)\\.[^`]+)`\\s*\\|", Pattern.MULTILINE);

	private static final Pattern LINK = Pattern.compile("!?\\[[^\\]]*\\]\\(([^)\\s]+)(?:\\s+\"[^\"]*\")?\\)");

	private static final Pattern CODE_SPAN = Pattern.compile("(`+)(?:(?!\\1).)+?\\1");

	private static final Pattern HEADING = Pattern.compile("^#{1,6}\\s+(.+?)\\s*#*\\s*$");

	private static final Pattern HTML_ANCHOR = Pattern.compile("<a\\s+(?:id|name)=\"([^\"]+)\"");

	/**
	 * Anchors of the README before its reference moved to docs/, kept for bookmarks and
	 * links from elsewhere.
	 */
	private static final List<String> README_ANCHORS = List.of("ratelimit-spring-boot", "quick-start-five-minutes",
			"compatibility", "testing-your-limits", "the-sample-application", "the-reactive-sample", "reference",
			"ratelimited", "properties", "algorithms", "headers-and-rejections", "keys-and-identities",
			"normalise-identities-your-user-store-compares-loosely", "where-limits-are-decided",
			"reactive-webflux-services", "protecting-logins", "what-guessing-costs", "in-memory-store",
			"extension-points-and-replaceable-beans", "your-own-store", "failure-behaviour", "shadow-mode",
			"waiting-for-a-permit", "plans", "metrics", "actuator-endpoint", "redis-store",
			"calling-rate-limited-apis-client-retries", "aot-and-native-images",
			"benchmarks-in-memory-cost-heap-per-identity-accuracy", "redis-and-http-benchmarks", "releasing",
			"adding-an-algorithm", "project-layout");

	@Test
	void everyPropertyIsDocumentedInTheConfigurationReference() {
		List<String> rows = propertyRows(read(CONFIGURATION));
		assertThat(properties()).as("properties without a row in docs/configuration.md")
			.filteredOn((property) -> rows.stream().noneMatch((row) -> documents(row, property)))
			.isEmpty();
	}

	@Test
	void everyPropertyRowNamesAPropertyAndAppearsOnce() {
		List<String> rows = propertyRows(read(CONFIGURATION));
		Set<String> properties = properties();
		assertThat(rows).doesNotHaveDuplicates();
		assertThat(rows).as("rows of docs/configuration.md that name no property")
			.filteredOn((row) -> properties.stream().noneMatch((property) -> documents(row, property)))
			.isEmpty();
	}

	@Test
	void noOtherPageHasARowOfItsOwnForAProperty() {
		Set<String> properties = properties();
		for (Path page : markdownFiles()) {
			if (page.normalize().equals(CONFIGURATION.normalize())) {
				continue;
			}
			assertThat(propertyRows(read(page))).as("property rows in %s, which belong in docs/configuration.md", page)
				.noneMatch((row) -> properties.stream().anyMatch((property) -> documents(row, property)));
		}
	}

	@Test
	void relativeLinksPointAtExistingFilesAndHeadings() {
		List<String> broken = new ArrayList<>();
		for (Path page : markdownFiles()) {
			for (String target : links(read(page))) {
				if (target.matches("^[a-zA-Z][a-zA-Z+.-]*:.*")) {
					continue;
				}
				int hash = target.indexOf('#');
				String file = (hash >= 0) ? target.substring(0, hash) : target;
				String fragment = (hash >= 0) ? target.substring(hash + 1) : null;
				Path resolved = file.isEmpty() ? page : page.getParent().resolve(file).normalize();
				if (!Files.exists(resolved)) {
					broken.add(page + ": " + target + " (no such file)");
				}
				else if (fragment != null && resolved.toString().endsWith(".md")
						&& !anchors(read(resolved)).contains(fragment)) {
					broken.add(page + ": " + target + " (no such heading or anchor)");
				}
			}
		}
		assertThat(broken).isEmpty();
	}

	@Test
	void readmeKeepsTheAnchorsOfItsFormerSections() {
		List<String> anchors = anchorList(read(ROOT.resolve("README.md")));
		assertThat(anchors).containsAll(README_ANCHORS).doesNotHaveDuplicates();
	}

	@Test
	void anchorsFollowGitHubRules() {
		assertThat(anchors("## Placing orders: a policy from `application.yml`, per user\n"))
			.containsExactly("placing-orders-a-policy-from-applicationyml-per-user");
		assertThat(anchors("# `@RateLimited`\n## Reading\n```\n# not a heading\n```\n## Reading\n"))
			.containsExactly("ratelimited", "reading", "reading-1");
		assertThat(anchors("## 1. In-memory decision cost\n<a id=\"kept\"></a>\n"))
			.containsExactly("1-in-memory-decision-cost", "kept");
	}

	/**
	 * A row documents a property it names, or every property under a name ending in
	 * {@code .*}.
	 */
	private static boolean documents(String row, String property) {
		if (row.endsWith(".*")) {
			return property.startsWith(row.substring(0, row.length() - 1));
		}
		return row.equals(property);
	}

	/**
	 * The properties bound by {@link RateLimitProperties} and those in the generated
	 * metadata. The metadata names a map or list of groups ({@code ratelimit.policies})
	 * as one property, which is documented through the rows of its members.
	 */
	private static Set<String> properties() {
		Set<String> bound = boundProperties();
		Set<String> properties = new TreeSet<>(bound);
		for (String name : metadataProperties()) {
			boolean group = bound.stream()
				.anyMatch((member) -> member.startsWith(name + ".") || member.startsWith(name + "["));
			if (!group) {
				properties.add(name);
			}
		}
		return properties;
	}

	/**
	 * Every property {@link RateLimitProperties} binds, map keys written {@code <name>} or
	 * {@code <plan>} and list indexes {@code [i]}.
	 */
	private static Set<String> boundProperties() {
		Set<String> names = new TreeSet<>();
		collect("ratelimit", RateLimitProperties.class, names);
		collect("ratelimit.client", RateLimitClientProperties.class, names);
		collect("ratelimit.overload", RateLimitOverloadProperties.class, names);
		assertThat(names).contains("ratelimit.enabled", "ratelimit.policies.<name>.plans.<plan>.capacity",
				"ratelimit.routes[i].path", "ratelimit.client.retry.max-attempts");
		return names;
	}

	private static void collect(String prefix, Class<?> type, Set<String> names) {
		for (PropertyDescriptor descriptor : BeanUtils.getPropertyDescriptors(type)) {
			if (descriptor.getReadMethod() == null || "class".equals(descriptor.getName())) {
				continue;
			}
			String name = prefix + "." + dashed(descriptor.getName());
			Class<?> rawType = descriptor.getPropertyType();
			Type genericType = descriptor.getReadMethod().getGenericReturnType();
			if (isGroup(rawType)) {
				collect(name, rawType, names);
			}
			else if (Map.class.isAssignableFrom(rawType) && isGroup(typeArgument(genericType, 1))) {
				String key = "plans".equals(descriptor.getName()) ? "<plan>" : "<name>";
				collect(name + "." + key, typeArgument(genericType, 1), names);
			}
			else if (List.class.isAssignableFrom(rawType) && isGroup(typeArgument(genericType, 0))) {
				collect(name + "[i]", typeArgument(genericType, 0), names);
			}
			else {
				names.add(name);
			}
		}
	}

	private static boolean isGroup(Class<?> type) {
		return type != null && !type.isEnum() && Stream
			.of(RateLimitProperties.class, RateLimitClientProperties.class, RateLimitOverloadProperties.class,
					RateLimitPolicyProperties.class, RateLimitRouteProperties.class)
			.anyMatch((bound) -> type == bound || type.getName().startsWith(bound.getName() + "$"));
	}

	private static Class<?> typeArgument(Type type, int index) {
		if (type instanceof ParameterizedType parameterized
				&& parameterized.getActualTypeArguments()[index] instanceof Class<?> argument) {
			return argument;
		}
		return null;
	}

	private static String dashed(String camelCase) {
		return camelCase.replaceAll("([a-z0-9])([A-Z])", "$1-$2").toLowerCase(Locale.ROOT);
	}

	/**
	 * Properties of the starter in the metadata generated at build time, which IDEs
	 * complete.
	 */
	private static Set<String> metadataProperties() {
		JsonNode metadata = JsonMapper.builder().build().readTree(read(METADATA));
		Set<String> names = new TreeSet<>();
		for (JsonNode property : metadata.get("properties")) {
			String name = property.get("name").asString();
			if (name.startsWith("ratelimit.") || name.startsWith("management.endpoint.ratelimits.")) {
				names.add(name);
			}
		}
		assertThat(names).contains("ratelimit.enabled", "ratelimit.policies");
		return names;
	}

	private static List<String> propertyRows(String markdown) {
		List<String> rows = new ArrayList<>();
		Matcher matcher = PROPERTY_ROW.matcher(withoutCodeBlocks(markdown));
		while (matcher.find()) {
			rows.add(matcher.group(1));
		}
		return rows;
	}

	private static List<String> links(String markdown) {
		List<String> targets = new ArrayList<>();
		for (String line : withoutCodeBlocks(markdown).split("\n")) {
			Matcher matcher = LINK.matcher(CODE_SPAN.matcher(line).replaceAll("code"));
			while (matcher.find()) {
				targets.add(matcher.group(1));
			}
		}
		return targets;
	}

	private static Set<String> anchors(String markdown) {
		return new LinkedHashSet<>(anchorList(markdown));
	}

	/**
	 * Anchors as GitHub makes them: a heading's text lower-cased, punctuation other than
	 * hyphens and underscores removed, spaces made hyphens, repeats numbered; and
	 * explicit {@code <a id>} or {@code <a name>}.
	 */
	private static List<String> anchorList(String markdown) {
		List<String> anchors = new ArrayList<>();
		Map<String, Integer> seen = new HashMap<>();
		for (String line : withoutCodeBlocks(markdown).split("\n")) {
			Matcher heading = HEADING.matcher(line);
			if (heading.matches()) {
				String text = heading.group(1).replaceAll("\\[([^\\]]*)\\]\\([^)]*\\)", "$1").replaceAll("<[^>]+>", "");
				String slug = text.toLowerCase(Locale.ROOT).replaceAll("[^\\p{L}\\p{M}\\p{N}_\\- ]", "").replace(' ', '-');
				int count = seen.merge(slug, 1, Integer::sum);
				anchors.add((count == 1) ? slug : slug + "-" + (count - 1));
			}
			Matcher html = HTML_ANCHOR.matcher(line);
			while (html.find()) {
				anchors.add(html.group(1));
			}
		}
		return anchors;
	}

	/**
	 * The text with fenced code blocks blanked out, line for line.
	 */
	private static String withoutCodeBlocks(String markdown) {
		StringBuilder text = new StringBuilder();
		String fence = null;
		for (String line : markdown.split("\n", -1)) {
			String trimmed = line.stripLeading();
			if (fence == null && (trimmed.startsWith("```") || trimmed.startsWith("~~~"))) {
				fence = trimmed.substring(0, 3);
				text.append('\n');
			}
			else if (fence != null) {
				if (trimmed.startsWith(fence)) {
					fence = null;
				}
				text.append('\n');
			}
			else {
				text.append(line).append('\n');
			}
		}
		return text.toString();
	}

	/**
	 * The README, the changelog and every page under docs/.
	 */
	private static List<Path> markdownFiles() {
		try (Stream<Path> docs = Files.walk(ROOT.resolve("docs"))) {
			List<Path> files = new ArrayList<>(List.of(ROOT.resolve("README.md"), ROOT.resolve("CHANGELOG.md")));
			files.addAll(docs.filter((path) -> path.toString().endsWith(".md")).sorted().collect(Collectors.toList()));
			assertThat(files).contains(CONFIGURATION);
			return files;
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

	private static String read(Path path) {
		try {
			return Files.readString(path);
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

}
