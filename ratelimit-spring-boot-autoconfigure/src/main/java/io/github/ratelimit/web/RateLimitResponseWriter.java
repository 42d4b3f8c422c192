package io.github.ratelimit.web;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.function.Function;
import java.util.stream.Collectors;

import jakarta.servlet.http.HttpServletResponse;

import io.github.ratelimit.RateLimitUnavailableException;
import io.github.ratelimit.core.RateLimitDecision;

/**
 * Writes rate limit headers and {@code 429} problem responses.
 */
public final class RateLimitResponseWriter {

	/** Problem type of a rejection. */
	public static final String QUOTA_EXCEEDED = "https://iana.org/assignments/http-problem-types#quota-exceeded";

	/** Problem type of a fail-closed limit whose store is down. */
	public static final String TEMPORARY_REDUCED_CAPACITY = "https://iana.org/assignments/http-problem-types#temporary-reduced-capacity";

	private static final String QUOTA_EXCEEDED_TITLE = "Request cannot be satisfied as assigned quota has been exceeded";

	private final HeaderStyle style;

	/**
	 * Creates a writer.
	 * @param style the header style
	 */
	public RateLimitResponseWriter(HeaderStyle style) {
		this.style = style;
	}

	/**
	 * Sets the rate limit headers for every decision made for the request so far.
	 * @param response the response
	 * @param decisions the decisions
	 */
	public void writeHeaders(HttpServletResponse response, List<RateLimitDecision> all) {
		List<RateLimitDecision> decisions = advertised(all);
		if (decisions.isEmpty() || response.isCommitted()) {
			return;
		}
		switch (this.style) {
			case IETF -> {
				response.setHeader("RateLimit-Policy", joinDistinct(decisions, RateLimitResponseWriter::policyItem));
				response.setHeader("RateLimit", joinDistinct(decisions, RateLimitResponseWriter::quotaItem));
			}
			case DRAFT_06 -> writeSingle(response, "RateLimit-", mostRestrictive(decisions));
			case X_RATELIMIT -> writeSingle(response, "X-RateLimit-", mostRestrictive(decisions));
			case NONE -> {
			}
		}
	}

	/**
	 * Answers {@code 429 Too Many Requests} with {@code Retry-After}, the rate limit headers
	 * and an {@code application/problem+json} body naming the violated limits.
	 * @param response the response
	 * @param decisions every decision made for the request, at least one rejected
	 * @throws IOException when the body cannot be written
	 */
	public void writeRejection(HttpServletResponse response, List<RateLimitDecision> decisions) throws IOException {
		if (response.isCommitted()) {
			return;
		}
		List<RateLimitDecision> rejections = decisions.stream().filter(RateLimitDecision::rejects).toList();
		long retryAfter = Math.max(1,
				ceilSeconds(rejections.stream().mapToLong(RateLimitDecision::retryAfterMicros).max().orElse(0)));
		List<String> violated = rejections.stream().map((d) -> d.limit().name()).distinct().toList();
		response.resetBuffer();
		writeHeaders(response, decisions);
		String detail = "Rate limit exceeded for " + String.join(", ", violated) + "; retry after " + retryAfter
				+ ((retryAfter == 1) ? " second." : " seconds.");
		String body = "{\"type\":" + json(QUOTA_EXCEEDED) + ",\"title\":" + json(QUOTA_EXCEEDED_TITLE)
				+ ",\"status\":429,\"detail\":" + json(detail) + ",\"violated-policies\":"
				+ violated.stream().map(RateLimitResponseWriter::json).collect(Collectors.joining(",", "[", "]"))
				+ "}";
		writeProblem(response, 429, retryAfter, body);
	}

	/**
	 * Answers {@code 503 Service Unavailable}: fail-closed limits could not be decided
	 * because their store is failing.
	 * @param response the response
	 * @param unavailable what could not be decided, and when to retry
	 * @throws IOException when the body cannot be written
	 */
	public void writeUnavailable(HttpServletResponse response, RateLimitUnavailableException unavailable)
			throws IOException {
		if (response.isCommitted()) {
			return;
		}
		long retryAfter = Math.max(1, ceilSeconds(unavailable.getRetryAfter().toNanos() / 1_000));
		String detail = "Rate limits " + String.join(", ", unavailable.getLimits())
				+ " cannot be checked right now; retry after " + retryAfter + ((retryAfter == 1) ? " second." : " seconds.");
		String body = "{\"type\":" + json(TEMPORARY_REDUCED_CAPACITY) + ",\"title\":" + json("Temporary reduced capacity")
				+ ",\"status\":503,\"detail\":" + json(detail) + ",\"limits\":"
				+ unavailable.getLimits().stream().map(RateLimitResponseWriter::json).collect(Collectors.joining(",", "[", "]"))
				+ "}";
		writeProblem(response, 503, retryAfter, body);
	}

	private static void writeProblem(HttpServletResponse response, int status, long retryAfter, String body)
			throws IOException {
		response.setStatus(status);
		response.setHeader("Retry-After", Long.toString(retryAfter));
		response.setHeader("Cache-Control", "no-store");
		response.setContentType("application/problem+json");
		response.setCharacterEncoding(StandardCharsets.UTF_8.name());
		byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
		response.setContentLength(bytes.length);
		response.getOutputStream().write(bytes);
		response.flushBuffer();
	}

	/** The decisions to advertise: candidates are compared in metrics, never advertised. */
	private static List<RateLimitDecision> advertised(List<RateLimitDecision> all) {
		for (RateLimitDecision decision : all) {
			if (decision.limit().isCandidate()) {
				return all.stream().filter((d) -> !d.limit().isCandidate()).toList();
			}
		}
		return all;
	}

	/**
	 * The distinct items of the decisions, in order, joined by commas. A loop rather than a
	 * stream with {@code distinct()}: it runs for every limited response, nearly always
	 * with one decision.
	 */
	private static String joinDistinct(List<RateLimitDecision> decisions, Function<RateLimitDecision, String> item) {
		String first = item.apply(decisions.get(0));
		if (decisions.size() == 1) {
			return first;
		}
		List<String> items = new ArrayList<>(decisions.size());
		items.add(first);
		for (int i = 1; i < decisions.size(); i++) {
			String next = item.apply(decisions.get(i));
			if (!items.contains(next)) {
				items.add(next);
			}
		}
		return String.join(", ", items);
	}

	private static String policyItem(RateLimitDecision decision) {
		return sfString(decision.limit().name()) + ";q=" + decision.limit().capacity() + ";w="
				+ Math.max(1, ceilSeconds(decision.limit().quotaWindowMicros()));
	}

	private static String quotaItem(RateLimitDecision decision) {
		return sfString(decision.limit().name()) + ";r=" + decision.remaining() + ";t="
				+ ceilSeconds(decision.resetMicros());
	}

	private static void writeSingle(HttpServletResponse response, String prefix, RateLimitDecision decision) {
		response.setHeader(prefix + "Limit", Long.toString(decision.limit().capacity()));
		response.setHeader(prefix + "Remaining", Long.toString(decision.remaining()));
		response.setHeader(prefix + "Reset", Long.toString(ceilSeconds(decision.resetMicros())));
	}

	/** A rejection if there is one, otherwise the decision with the least quota left. */
	private static RateLimitDecision mostRestrictive(List<RateLimitDecision> decisions) {
		return decisions.stream()
			.min(Comparator.comparing((RateLimitDecision d) -> !d.rejects())
				.thenComparing((RateLimitDecision d) -> d.limit().shadow())
				.thenComparingLong(RateLimitDecision::remaining)
				.thenComparing(Comparator.comparingLong(RateLimitDecision::resetMicros).reversed()))
			.orElseThrow();
	}

	static long ceilSeconds(long micros) {
		return (micros <= 0) ? 0 : (micros + 999_999) / 1_000_000;
	}

	/** An RFC 8941 sf-string: printable ASCII with {@code "} and {@code \} escaped. */
	static String sfString(String value) {
		StringBuilder out = new StringBuilder(value.length() + 2).append('"');
		for (int i = 0; i < value.length(); i++) {
			char c = value.charAt(i);
			if (c == '"' || c == '\\') {
				out.append('\\').append(c);
			}
			else if (c >= 0x20 && c < 0x7f) {
				out.append(c);
			}
			else {
				out.append('?');
			}
		}
		return out.append('"').toString();
	}

	static String json(String value) {
		StringBuilder out = new StringBuilder(value.length() + 2).append('"');
		for (int i = 0; i < value.length(); i++) {
			char c = value.charAt(i);
			switch (c) {
				case '"' -> out.append("\\\"");
				case '\\' -> out.append("\\\\");
				default -> {
					if (c < 0x20) {
						out.append(String.format("\\u%04x", (int) c));
					}
					else {
						out.append(c);
					}
				}
			}
		}
		return out.append('"').toString();
	}

}
