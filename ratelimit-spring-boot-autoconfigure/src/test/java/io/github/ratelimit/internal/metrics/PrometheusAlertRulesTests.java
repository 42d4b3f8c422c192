package io.github.ratelimit.internal.metrics;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * Runs the unit tests of the Prometheus alerting rules in {@code docs/ops} with
 * {@code promtool} (Debian package {@code prometheus}; CI installs it). Skipped on a
 * machine without promtool.
 */
class PrometheusAlertRulesTests {

	private static final Path OPS = Path.of("..", "docs", "ops");

	@Test
	void alertRulesPassTheirPromtoolTests() throws IOException, InterruptedException {
		String promtool = promtool();
		assumeTrue(promtool != null, "promtool is not installed");
		assertThat(run(promtool, "check", "rules", "ratelimit-alerts.yml")).contains("SUCCESS");
		assertThat(run(promtool, "test", "rules", "ratelimit-alerts-test.yml")).contains("SUCCESS");
	}

	private static String run(String... command) throws IOException, InterruptedException {
		Process process = new ProcessBuilder(command).directory(OPS.toFile()).redirectErrorStream(true).start();
		assertThat(process.waitFor(60, TimeUnit.SECONDS)).as("promtool finished").isTrue();
		String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
		assertThat(process.exitValue()).as(output).isZero();
		return output;
	}

	private static String promtool() {
		for (String dir : System.getenv().getOrDefault("PATH", "/usr/bin").split(File.pathSeparator)) {
			File candidate = new File(dir, "promtool");
			if (candidate.canExecute()) {
				return candidate.getAbsolutePath();
			}
		}
		return null;
	}

}
