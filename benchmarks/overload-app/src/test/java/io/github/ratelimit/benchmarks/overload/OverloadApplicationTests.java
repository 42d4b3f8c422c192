package io.github.ratelimit.benchmarks.overload;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;

import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The service starts with the fixed limit, serves {@code GET /work} and shows the limit.
 */
@SpringBootTest(webEnvironment = WebEnvironment.RANDOM_PORT, properties = "bench.protection=fixed")
class OverloadApplicationTests {

	@Value("${local.server.port}")
	private int port;

	private final HttpClient client = HttpClient.newHttpClient();

	@Test
	void servesWorkBehindTheFixedLimit() throws Exception {
		HttpResponse<String> work = get("/work");
		assertThat(work.statusCode()).isEqualTo(200);
		assertThat(work.body()).isEqualTo("done");
		HttpResponse<String> state = get("/bench/state");
		assertThat(state.body()).isEqualTo("{\"dependencyInFlight\":0,\"overload\":{\"limit\":16,\"inFlight\":0}}");
	}

	private HttpResponse<String> get(String path) throws Exception {
		HttpRequest request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + this.port + path))
			.header("X-Priority", "critical")
			.build();
		return this.client.send(request, HttpResponse.BodyHandlers.ofString());
	}

}
