package io.github.ratelimit.benchmarks.overload;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.OptionalDouble;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Reads a number from a JSON document a service serves: the {@code limit} of its
 * {@code overload} section ({@code /actuator/ratelimits} of this library, or the
 * benchmark service's {@code /bench/state} for the fixed and Netflix variants), or the
 * calls its dependency has in flight.
 */
final class LimitProbe {

	private static final Pattern OVERLOAD = Pattern.compile("\"overload\"\\s*:\\s*\\{");

	private static final Pattern LIMIT = Pattern.compile("\"limit\"\\s*:\\s*(-?[0-9]+(?:\\.[0-9]+)?)");

	private static final Pattern DEPENDENCY = Pattern.compile("\"dependencyInFlight\"\\s*:\\s*([0-9]+)");

	private final HttpClient client;

	/**
	 * Creates a probe.
	 * @param client a client of its own, apart from the load's
	 */
	LimitProbe(HttpClient client) {
		this.client = client;
	}

	/**
	 * The limit the document at {@code uri} shows.
	 * @param uri where the document is
	 * @return the limit, or empty when the request failed or the document shows none
	 */
	OptionalDouble limit(URI uri) {
		String body = get(uri);
		if (body == null) {
			return OptionalDouble.empty();
		}
		return limitIn(body);
	}

	/**
	 * The first {@code limit} after the start of the {@code overload} object.
	 * @param json the document
	 * @return the limit, or empty
	 */
	static OptionalDouble limitIn(String json) {
		Matcher overload = OVERLOAD.matcher(json);
		if (!overload.find()) {
			return OptionalDouble.empty();
		}
		Matcher limit = LIMIT.matcher(json);
		return limit.find(overload.end()) ? OptionalDouble.of(Double.parseDouble(limit.group(1)))
				: OptionalDouble.empty();
	}

	/**
	 * The calls in the service's dependency, from its {@code /bench/state}.
	 * @param uri the state document
	 * @return the calls, or -1 when the request failed
	 */
	int dependencyInFlight(URI uri) {
		String body = get(uri);
		if (body == null) {
			return -1;
		}
		Matcher matcher = DEPENDENCY.matcher(body);
		return matcher.find() ? Integer.parseInt(matcher.group(1)) : -1;
	}

	private String get(URI uri) {
		try {
			HttpResponse<String> response = this.client.send(
					// critical, should a protection shed by priority beyond the endpoint it guards
					HttpRequest.newBuilder(uri).timeout(Duration.ofSeconds(5)).header("X-Priority", "critical").build(),
					HttpResponse.BodyHandlers.ofString());
			return (response.statusCode() == 200) ? response.body() : null;
		}
		catch (IOException ex) {
			return null;
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			return null;
		}
	}

}
