package io.github.ratelimit.architecture;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Pins the API line: public types are the user API, the store SPI, the auto-configuration
 * with its properties, and the test kit; everything else is package-private or lives in a
 * package named {@code internal}. A new public type outside the internal packages fails
 * here until it is added to the list below, and to the README's extension points.
 */
class ApiLineTests {

	private static final List<String> API = List.of(
			// the user API
			"io.github.ratelimit.Algorithm", "io.github.ratelimit.CalendarPeriod", "io.github.ratelimit.FailMode",
			"io.github.ratelimit.KeyResolver", "io.github.ratelimit.KeySource", "io.github.ratelimit.PlanResolver",
			"io.github.ratelimit.RateLimitConfigurationException", "io.github.ratelimit.RateLimitExceededException",
			"io.github.ratelimit.RateLimitRequest", "io.github.ratelimit.RateLimitUnavailableException",
			"io.github.ratelimit.RateLimited",
			// overload protection: a priority, where it is declared and who else may decide it
			"io.github.ratelimit.OverloadPriority", "io.github.ratelimit.RequestPriority",
			"io.github.ratelimit.RequestPriorityResolver",
			// costs known after the call: where a call reports what it actually cost
			"io.github.ratelimit.RateLimitUsage",
			// the store SPI
			"io.github.ratelimit.store.Acquisition", "io.github.ratelimit.store.AtomicStateStorage",
			"io.github.ratelimit.store.BucketKey",
			"io.github.ratelimit.store.BucketSnapshot", "io.github.ratelimit.store.MutableDecision",
			"io.github.ratelimit.store.RateLimit", "io.github.ratelimit.store.RateLimitDecision",
			"io.github.ratelimit.store.RateLimitResult", "io.github.ratelimit.store.RateLimitStore",
			"io.github.ratelimit.store.RateLimitObserver", "io.github.ratelimit.store.RateLimitStores",
			"io.github.ratelimit.store.StoreStatus",
			// the auto-configuration and its properties
			"io.github.ratelimit.autoconfigure.RateLimitAutoConfiguration",
			"io.github.ratelimit.autoconfigure.RateLimitClientAutoConfiguration",
			"io.github.ratelimit.autoconfigure.RateLimitClientProperties",
			"io.github.ratelimit.autoconfigure.RateLimitJdbcProperties",
			"io.github.ratelimit.autoconfigure.RateLimitOverloadProperties",
			"io.github.ratelimit.autoconfigure.RateLimitPolicyProperties",
			"io.github.ratelimit.autoconfigure.RateLimitProperties",
			"io.github.ratelimit.autoconfigure.RateLimitRouteProperties");

	private static final List<String> TEST_KIT = List.of("io.github.ratelimit.test.AutoConfigureRateLimitTest",
			"io.github.ratelimit.test.RateLimitDecisions", "io.github.ratelimit.test.RateLimitDecisionsAssert",
			"io.github.ratelimit.test.RateLimitTestAutoConfiguration", "io.github.ratelimit.test.RecordedDecision",
			"io.github.ratelimit.test.ResetRateLimitsTestExecutionListener",
			"io.github.ratelimit.test.TestRateLimitClock");

	private static final Pattern PUBLIC_TOP_LEVEL = Pattern.compile(
			"^public (?:(?:final|abstract|sealed|non-sealed|static) )*(?:class|interface|enum|record|@interface) (\\w+)",
			Pattern.MULTILINE);

	@Test
	void publicTypesOutsideInternalPackagesAreTheListedApi() {
		assertThat(publicTypesOutsideInternalPackages()).containsExactlyInAnyOrderElementsOf(concat(API, TEST_KIT));
	}

	@Test
	void theLibraryApiStaysSmall() {
		// 30 for what 1.0 counted requests with; overload protection added its priority, the
		// annotation and the resolver that declare it, and its properties; costs settled after
		// the call added the one object a call reports its actual cost to, which no
		// annotation attribute can replace when the cost is known only in code
		assertThat(API).hasSizeLessThanOrEqualTo(35);
	}

	@Test
	void everyPackageSaysWhatItIsForAndIsNullMarked() {
		Map<String, Path> packages = new TreeMap<>();
		Sources.files().forEach((file) -> packages.putIfAbsent(Sources.packageOf(file), file.getParent()));
		assertThat(packages).isNotEmpty().allSatisfy((name, directory) -> {
			Path packageInfo = directory.resolve("package-info.java");
			assertThat(packageInfo).as(name).exists();
			assertThat(Sources.read(packageInfo)).as(name)
				.contains("@NullMarked\npackage " + name + ";")
				.contains("import org.jspecify.annotations.NullMarked;")
				.startsWith("/**\n * ");
		});
	}

	private static TreeSet<String> publicTypesOutsideInternalPackages() {
		TreeSet<String> types = new TreeSet<>();
		for (Path file : Sources.files()) {
			String packageName = Sources.packageOf(file);
			if (packageName.contains(".internal.") || packageName.endsWith(".internal")) {
				continue;
			}
			Matcher matcher = PUBLIC_TOP_LEVEL.matcher(Sources.read(file));
			while (matcher.find()) {
				types.add(packageName + "." + matcher.group(1));
			}
		}
		return types;
	}

	private static List<String> concat(List<String> first, List<String> second) {
		return java.util.stream.Stream.concat(first.stream(), second.stream()).toList();
	}

}
