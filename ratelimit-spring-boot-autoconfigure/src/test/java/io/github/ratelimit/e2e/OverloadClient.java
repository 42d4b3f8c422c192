package io.github.ratelimit.e2e;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.IntSupplier;

import static org.awaitility.Awaitility.await;

/**
 * Requests to a service under overload protection: answered ones, and ones left in
 * flight until the test lets their handlers finish.
 */
final class OverloadClient {

	private final HttpClient client = HttpClient.newBuilder()
		.version(HttpClient.Version.HTTP_1_1)
		.connectTimeout(Duration.ofSeconds(5))
		.build();

	private final int port;

	private final IntSupplier inFlight;

	/** The requests this client holds in flight. */
	private int held;

	OverloadClient(int port, IntSupplier inFlight) {
		this.port = port;
		this.inFlight = inFlight;
	}

	/**
	 * Sends a request and waits until the service has released it too, which it does just
	 * after the client has the answer: the next request finds only the held ones in flight.
	 */
	HttpResponse<String> get(String path, String... headers) {
		try {
			HttpResponse<String> response = this.client.send(request(path, headers),
					HttpResponse.BodyHandlers.ofString());
			awaitInFlight(this.inFlight, this.held);
			return response;
		}
		catch (IOException ex) {
			throw new IllegalStateException(ex);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
	}

	CompletableFuture<HttpResponse<String>> send(String path, String... headers) {
		return this.client.sendAsync(request(path, headers), HttpResponse.BodyHandlers.ofString());
	}

	/**
	 * Sends requests that the service holds in flight, and waits until it counts them all.
	 * @param count how many
	 * @param headers headers of each request
	 * @return the answers, once the handlers are let go
	 */
	List<CompletableFuture<HttpResponse<String>>> hold(int count, String... headers) {
		List<CompletableFuture<HttpResponse<String>>> held = new ArrayList<>(count);
		for (int i = 0; i < count; i++) {
			held.add(send("/held", headers));
		}
		this.held += count;
		awaitInFlight(this.inFlight, this.held);
		return held;
	}

	static void awaitInFlight(IntSupplier inFlight, int expected) {
		await().atMost(Duration.ofSeconds(10)).until(() -> inFlight.getAsInt() == expected);
	}

	private HttpRequest request(String path, String... headers) {
		HttpRequest.Builder builder = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + this.port + path))
			.timeout(Duration.ofSeconds(30));
		for (int i = 0; i < headers.length; i += 2) {
			builder.header(headers[i], headers[i + 1]);
		}
		return builder.GET().build();
	}

}
