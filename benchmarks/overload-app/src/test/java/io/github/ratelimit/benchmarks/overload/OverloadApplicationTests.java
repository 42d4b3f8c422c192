package io.github.ratelimit.benchmarks.overload;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.context.properties.bind.UnboundConfigurationPropertiesException;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatException;
import static org.junit.jupiter.api.Assumptions.assumeFalse;

/**
 * Each variant starts on its stack, serves {@code GET /work} and shows its limit, if it
 * has one it can show.
 */
class OverloadApplicationTests {

	private final HttpClient client = HttpClient.newHttpClient();

	@ParameterizedTest
	@CsvSource(delimiter = '|', textBlock = """
			none    | servlet  | {"dependencyInFlight":0}
			fixed   | servlet  | {"dependencyInFlight":0,"overload":{"limit":16,"inFlight":0}}
			spring  | servlet  | {"dependencyInFlight":0}
			netflix | servlet  | {"dependencyInFlight":0,"overload":{"limit":20,"inFlight":0}}
			none    | reactive | {"dependencyInFlight":0}
			fixed   | reactive | {"dependencyInFlight":0,"overload":{"limit":16,"inFlight":0}}
			""")
	void servesWork(String protection, String stack, String state) throws Exception {
		try (ConfigurableApplicationContext context = start("--bench.protection=" + protection,
				"--spring.main.web-application-type=" + stack)) {
			int port = ((WebServerApplicationContext) context).getWebServer().getPort();
			HttpResponse<String> work = get(port, "/work");
			assertThat(work.statusCode()).isEqualTo(200);
			assertThat(work.body()).isEqualTo("done");
			assertThat(get(port, "/bench/state").body()).isEqualTo(state);
		}
	}

	@Test
	void refusesAnUnknownVariant() {
		assertThatException().isThrownBy(() -> start("--bench.protection=bulkhead"))
			.withStackTraceContaining("bench.protection must be one of none, fixed, spring, netflix, ours: bulkhead");
	}

	@Test
	void refusesOursWithoutTheLibrarysOverloadProtection() {
		assertThatException().isThrownBy(() -> start("--bench.protection=ours"))
			.withStackTraceContaining("bench.protection=ours needs ratelimit.overload.enabled=true, not false");
	}

	/**
	 * The {@code ours} variant as the script starts it. Skipped while the starter has no
	 * {@code ratelimit.overload.*} (its startup then refuses them as unknown properties).
	 */
	@Test
	void runsOursWithTheLibrarysOverloadProtection() throws Exception {
		ConfigurableApplicationContext context;
		try {
			context = start("--bench.protection=ours", "--ratelimit.overload.enabled=true",
					"--ratelimit.overload.priority-header=X-Priority");
		}
		catch (RuntimeException ex) {
			assumeFalse(refusesUnknownOverloadProperties(ex), "the starter has no ratelimit.overload.* yet");
			throw ex;
		}
		try (context) {
			int port = ((WebServerApplicationContext) context).getWebServer().getPort();
			assertThat(get(port, "/work").statusCode()).isEqualTo(200);
			HttpResponse<String> ratelimits = get(port, "/actuator/ratelimits");
			assertThat(ratelimits.statusCode()).isEqualTo(200);
			// what the benchmark's recovery probe reads: the overload section's limit
			assertThat(ratelimits.body()).containsPattern("\"overload\"\\s*:\\s*\\{[^}]*\"limit\"\\s*:\\s*[0-9]")
				.containsPattern("\"overload\"\\s*:\\s*\\{[^}]*\"inFlight\"\\s*:\\s*[0-9]");
		}
	}

	private static boolean refusesUnknownOverloadProperties(Throwable error) {
		for (Throwable cause = error; cause != null; cause = cause.getCause()) {
			if (cause instanceof UnboundConfigurationPropertiesException unbound) {
				return unbound.getUnboundProperties()
					.stream()
					.allMatch((property) -> property.getName().toString().startsWith("ratelimit.overload."));
			}
		}
		return false;
	}

	private static ConfigurableApplicationContext start(String... args) {
		String[] all = new String[args.length + 1];
		all[0] = "--server.port=0";
		System.arraycopy(args, 0, all, 1, args.length);
		return SpringApplication.run(OverloadApplication.class, all);
	}

	private HttpResponse<String> get(int port, String path) throws Exception {
		HttpRequest request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
			.header("X-Priority", "critical")
			.build();
		return this.client.send(request, HttpResponse.BodyHandlers.ofString());
	}

}
