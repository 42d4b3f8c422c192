package io.github.ratelimit.internal.pipeline;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.BiConsumer;
import java.util.function.Function;
import java.util.stream.Collectors;

import io.github.ratelimit.RateLimitUnavailableException;
import io.github.ratelimit.internal.core.AlgorithmSpec;
import io.github.ratelimit.internal.core.LimitDefinition;
import io.github.ratelimit.store.RateLimit;
import io.github.ratelimit.store.RateLimitDecision;

/**
 * Renders what a limited response says: the rate limit headers in the configured style,
 * and the {@code 429} and {@code 503} problem responses. Web stacks write the result to
 * their own response types.
 */
public final class RateLimitResponses {

	/** Problem type of a rejection. */
	public static final String QUOTA_EXCEEDED = "https://iana.org/assignments/http-problem-types#quota-exceeded";

	/** Problem type of a fail-closed limit whose store is down. */
	public static final String TEMPORARY_REDUCED_CAPACITY = "https://iana.org/assignments/http-problem-types#temporary-reduced-capacity";

	private static final String QUOTA_EXCEEDED_TITLE = "Request cannot be satisfied as assigned quota has been exceeded";

	/**
	 * Bound on the limit names whose header text is kept: names come from configuration
	 * and annotations, so an application has far fewer; past it, text is built per request.
	 */
	static final int MAX_CACHED_NAMES = 1_000;

	private final HeaderStyle style;

	/** What the quota of a limit counts, by limit name; {@code null} for requests. */
	private final Function<String, String> units;

	/** What the headers say of a limit that changes only with the limit, by limit name. */
	private final Map<String, LimitText> texts = new ConcurrentHashMap<>();

	/** The item builders, bound once rather than on every response. */
	private final Function<RateLimitDecision, String> policyItemOf = this::policyItem;

	private final Function<RateLimitDecision, String> quotaItemOf = this::quotaItem;

	/**
	 * Where a header value with numbers is written, per thread: the value handed to a
	 * {@link HeaderSink} is this text, read before the sink returns, so that rendering it
	 * allocates nothing.
	 */
	private final ThreadLocal<StringBuilder> scratch = ThreadLocal.withInitial(() -> new StringBuilder(64));

	/** Header names of the single-limit styles, built once. */
	private final String[] singleNames;

	/**
	 * Creates a writer whose rate limits all count requests, but for those on calls in
	 * flight.
	 * @param style the header style
	 */
	public RateLimitResponses(HeaderStyle style) {
		this(style, (name) -> null);
	}

	/**
	 * Creates a writer.
	 * @param style the header style
	 * @param units what the quota of a limit counts, by limit name, as the IETF quota unit;
	 * {@code null} or {@code requests} for requests. Asked once per limit, when its header
	 * text is built.
	 */
	public RateLimitResponses(HeaderStyle style, Function<String, String> units) {
		this.style = style;
		this.units = units;
		String prefix = (style == HeaderStyle.X_RATELIMIT) ? "X-RateLimit-" : "RateLimit-";
		this.singleNames = new String[] { prefix + "Limit", prefix + "Remaining", prefix + "Reset" };
	}

	/**
	 * Receives a rate limit header whose value may be text the renderer reuses: it is read
	 * before {@link #header} returns, never kept.
	 */
	@FunctionalInterface
	public interface HeaderSink {

		/**
		 * Receives one header.
		 * @param name the header name
		 * @param value the value, valid until this method returns
		 */
		void header(String name, CharSequence value);

	}

	/**
	 * The rate limit headers of a request with one decision, given by what it says, as
	 * {@link #headers(List, BiConsumer)} renders them for that decision alone, allocating
	 * nothing once the limit's text is kept.
	 * @param limit the limit that admitted the request, no candidate
	 * @param remaining quota units left
	 * @param resetMicros time until more quota
	 * @param windowMicros length of the quota window the decision was taken in
	 * @param headers receives each header name and value
	 */
	public void headers(RateLimit limit, long remaining, long resetMicros, long windowMicros, HeaderSink headers) {
		switch (this.style) {
			case IETF -> {
				LimitText text = text(limit, windowMicros);
				headers.header("RateLimit-Policy", text.policy());
				StringBuilder value = scratch().append(text.quoted())
					.append(";r=")
					.append(remaining)
					.append(";t=")
					.append(ceilSeconds(resetMicros));
				headers.header("RateLimit", value);
			}
			case DRAFT_06, X_RATELIMIT -> {
				headers.header(this.singleNames[0], scratch().append(limit.capacity()));
				headers.header(this.singleNames[1], scratch().append(remaining));
				headers.header(this.singleNames[2], scratch().append(ceilSeconds(resetMicros)));
			}
			case NONE -> {
			}
		}
	}

	/** This thread's header text, emptied. */
	private StringBuilder scratch() {
		StringBuilder text = this.scratch.get();
		text.setLength(0);
		return text;
	}

	/**
	 * The rate limit headers for every decision made for a request so far.
	 * @param all the decisions
	 * @param headers receives each header name and value
	 */
	public void headers(List<RateLimitDecision> all, BiConsumer<String, String> headers) {
		List<RateLimitDecision> decisions = advertised(all);
		if (decisions.isEmpty()) {
			return;
		}
		switch (this.style) {
			case IETF -> {
				if (decisions.size() == 1) {
					// the usual response: one limit, whose texts are looked up once
					RateLimitDecision decision = decisions.get(0);
					LimitText text = text(decision);
					headers.accept("RateLimit-Policy", text.policy());
					headers.accept("RateLimit", quotaItem(text, decision));
				}
				else {
					headers.accept("RateLimit-Policy", joinDistinct(decisions, this.policyItemOf));
					headers.accept("RateLimit", joinDistinct(decisions, this.quotaItemOf));
				}
			}
			case DRAFT_06 -> single(headers, "RateLimit-", mostRestrictive(decisions));
			case X_RATELIMIT -> single(headers, "X-RateLimit-", mostRestrictive(decisions));
			case NONE -> {
			}
		}
	}

	/**
	 * The {@code 429 Too Many Requests} answer: {@code Retry-After}, the rate limit headers
	 * and an {@code application/problem+json} body naming the violated limits.
	 * @param decisions every decision made for the request, at least one rejected
	 * @return the response to write
	 */
	public ProblemResponse rejection(List<RateLimitDecision> decisions) {
		List<RateLimitDecision> rejections = decisions.stream().filter(RateLimitDecision::rejects).toList();
		long retryAfter = Math.max(1,
				ceilSeconds(rejections.stream().mapToLong(RateLimitDecision::retryAfterMicros).max().orElse(0)));
		List<String> violated = rejections.stream().map((d) -> d.limit().name()).distinct().toList();
		Map<String, String> headers = new LinkedHashMap<>();
		headers(decisions, headers::put);
		String detail = "Rate limit exceeded for " + String.join(", ", violated) + "; retry after " + retryAfter
				+ ((retryAfter == 1) ? " second." : " seconds.");
		String body = "{\"type\":" + json(QUOTA_EXCEEDED) + ",\"title\":" + json(QUOTA_EXCEEDED_TITLE)
				+ ",\"status\":429,\"detail\":" + json(detail) + ",\"violated-policies\":"
				+ violated.stream().map(RateLimitResponses::json).collect(Collectors.joining(",", "[", "]"))
				+ "}";
		return problem(429, retryAfter, headers, body);
	}

	/**
	 * The {@code 503 Service Unavailable} answer: fail-closed limits could not be decided
	 * because their store is failing.
	 * @param unavailable what could not be decided, and when to retry
	 * @return the response to write
	 */
	public ProblemResponse unavailable(RateLimitUnavailableException unavailable) {
		long retryAfter = Math.max(1, ceilSeconds(unavailable.getRetryAfter().toNanos() / 1_000));
		String detail = "Rate limits " + String.join(", ", unavailable.getLimits())
				+ " cannot be checked right now; retry after " + retryAfter + ((retryAfter == 1) ? " second." : " seconds.");
		String body = "{\"type\":" + json(TEMPORARY_REDUCED_CAPACITY) + ",\"title\":" + json("Temporary reduced capacity")
				+ ",\"status\":503,\"detail\":" + json(detail) + ",\"limits\":"
				+ unavailable.getLimits().stream().map(RateLimitResponses::json).collect(Collectors.joining(",", "[", "]"))
				+ "}";
		return problem(503, retryAfter, new LinkedHashMap<>(), body);
	}

	/** A problem response, never cacheable. */
	private static ProblemResponse problem(int status, long retryAfter, Map<String, String> headers, String body) {
		headers.put("Retry-After", Long.toString(retryAfter));
		headers.put("Cache-Control", "no-store");
		return new ProblemResponse(status, headers, body.getBytes(StandardCharsets.UTF_8));
	}

	/** The decisions to advertise: candidates are compared in metrics, never advertised. */
	private static List<RateLimitDecision> advertised(List<RateLimitDecision> all) {
		for (int i = 0; i < all.size(); i++) {
			if (all.get(i).limit().isCandidate()) {
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

	private String policyItem(RateLimitDecision decision) {
		return text(decision).policy();
	}

	private String quotaItem(RateLimitDecision decision) {
		return quotaItem(text(decision), decision);
	}

	private static String quotaItem(LimitText text, RateLimitDecision decision) {
		return text.quoted() + ";r=" + decision.remaining() + ";t=" + ceilSeconds(decision.resetMicros());
	}

	/**
	 * A limit's name as a structured-field string and its {@code RateLimit-Policy} item. The
	 * item changes only with the limit (a plan's capacity, a calendar window's length), so
	 * the last one built per limit name is kept and reused while those agree; names beyond
	 * the first {@value #MAX_CACHED_NAMES} are rendered each time.
	 */
	private LimitText text(RateLimitDecision decision) {
		return text(decision.limit(), decision.windowMicros());
	}

	private LimitText text(RateLimit limit, long windowMicros) {
		long window = Math.max(1, ceilSeconds(windowMicros));
		LimitText cached = this.texts.get(limit.name());
		if (cached != null && cached.capacity() == limit.capacity() && cached.windowSeconds() == window) {
			return cached;
		}
		String quoted;
		String unit;
		if (cached != null) {
			quoted = cached.quoted();
			unit = cached.unit();
		}
		else {
			quoted = sfString(limit.name());
			unit = unitParameter(limit);
		}
		// a limit on calls in flight counts concurrent requests and has no window: the draft's
		// quota unit says so, where q=2;w=60 would read as two requests a minute
		String policy = AlgorithmSpec.of(limit.algorithm()).heldInFlight()
				? quoted + ";q=" + limit.capacity() + unit
				: quoted + ";q=" + limit.capacity() + unit + ";w=" + window;
		LimitText text = new LimitText(quoted, unit, limit.capacity(), window, policy);
		if (cached != null || this.texts.size() < MAX_CACHED_NAMES) {
			this.texts.put(limit.name(), text);
		}
		return text;
	}

	/**
	 * The {@code qu} parameter of a limit's policy item: none for requests, the draft's
	 * default unit, so that a limit counting requests reads as it always did.
	 */
	private String unitParameter(RateLimit limit) {
		if (AlgorithmSpec.of(limit.algorithm()).heldInFlight()) {
			return ";qu=\"concurrent-requests\"";
		}
		String unit = this.units.apply(limit.name());
		return (unit == null || unit.equals(LimitDefinition.REQUESTS)) ? "" : ";qu=" + sfString(unit);
	}

	/**
	 * How many limit names have their header texts kept: {@value #MAX_CACHED_NAMES} at most, but
	 * for the few that threads racing to add the last ones may put beyond it.
	 * @return the number of names kept
	 */
	int cachedNames() {
		return this.texts.size();
	}

	/**
	 * A limit's quoted name and {@code qu} parameter (which change only with the name), and
	 * the last {@code RateLimit-Policy} item built for it with what it says.
	 */
	private record LimitText(String quoted, String unit, long capacity, long windowSeconds, String policy) {
	}

	private static void single(BiConsumer<String, String> headers, String prefix, RateLimitDecision decision) {
		headers.accept(prefix + "Limit", Long.toString(decision.limit().capacity()));
		headers.accept(prefix + "Remaining", Long.toString(decision.remaining()));
		headers.accept(prefix + "Reset", Long.toString(ceilSeconds(decision.resetMicros())));
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
