package io.github.ratelimit.e2e;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Base64;

/**
 * A small HTTP client for tests against the server on loopback.
 */
final class HttpTestClient {

	private final HttpClient client = HttpClient.newBuilder()
		.connectTimeout(Duration.ofSeconds(5))
		.followRedirects(HttpClient.Redirect.NEVER)
		.build();

	private final int port;

	HttpTestClient(int port) {
		this.port = port;
	}

	HttpResponse<String> get(String path, String... headers) {
		return send(request(path, headers).GET().build());
	}

	HttpResponse<String> head(String path, String... headers) {
		return send(request(path, headers).method("HEAD", HttpRequest.BodyPublishers.noBody()).build());
	}

	HttpResponse<String> options(String path, String... headers) {
		return send(request(path, headers).method("OPTIONS", HttpRequest.BodyPublishers.noBody()).build());
	}

	HttpResponse<String> post(String path, String form, String... headers) {
		return send(request(path, headers).header("Content-Type", "application/x-www-form-urlencoded")
			.POST(HttpRequest.BodyPublishers.ofString(form))
			.build());
	}

	static String[] basic(String user, String password) {
		String token = Base64.getEncoder().encodeToString((user + ":" + password).getBytes(StandardCharsets.UTF_8));
		return new String[] { "Authorization", "Basic " + token };
	}

	private HttpRequest.Builder request(String path, String... headers) {
		HttpRequest.Builder builder = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + this.port + path))
			.timeout(Duration.ofSeconds(10));
		if (headers.length > 0) {
			builder.headers(headers);
		}
		return builder;
	}

	private HttpResponse<String> send(HttpRequest request) {
		try {
			return this.client.send(request, HttpResponse.BodyHandlers.ofString());
		}
		catch (IOException ex) {
			throw new IllegalStateException(ex);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
	}

}
