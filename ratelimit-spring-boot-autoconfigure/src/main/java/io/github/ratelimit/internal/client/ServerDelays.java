package io.github.ratelimit.internal.client;

import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeFormatterBuilder;
import java.time.format.DateTimeParseException;
import java.time.temporal.ChronoField;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import org.springframework.http.HttpHeaders;

/**
 * Reads how long a server asks its client to wait: {@code Retry-After} (RFC 9110, as
 * delay-seconds or an HTTP-date) and the {@code t} of the exhausted policies in the
 * {@code RateLimit} field (draft-ietf-httpapi-ratelimit-headers, a Structured Field list).
 */
final class ServerDelays {

	static final String RETRY_AFTER = "Retry-After";

	static final String RATE_LIMIT = "RateLimit";

	/**
	 * The three HTTP-date forms a recipient must accept (RFC 9110, section 5.6.7):
	 * IMF-fixdate, the obsolete RFC 850 form, whose two-digit year is read within fifty
	 * years of today, and asctime, whose day may be space-padded.
	 */
	private static final List<DateTimeFormatter> HTTP_DATES = List.of(DateTimeFormatter.RFC_1123_DATE_TIME,
			new DateTimeFormatterBuilder().appendPattern("EEEE, dd-MMM-")
				.appendValueReduced(ChronoField.YEAR, 2, 2, LocalDate.now(ZoneOffset.UTC).minusYears(50))
				.appendPattern(" HH:mm:ss zzz")
				.toFormatter(Locale.US),
			DateTimeFormatter.ofPattern("EEE MMM ppd HH:mm:ss yyyy", Locale.US).withZone(ZoneOffset.UTC));

	private ServerDelays() {
	}

	/**
	 * The delay a response asks for: the longer of {@code Retry-After} and the
	 * {@code RateLimit} reset, since waiting less than either is likely to be refused again.
	 * @param headers the response headers
	 * @param now the local time the response arrived, for HTTP-dates without a {@code Date}
	 * @return the delay, or {@code null} when the response names none that can be read
	 */
	static Duration of(HttpHeaders headers, Instant now) {
		Duration retryAfter = retryAfter(headers, now);
		Duration reset = exhaustedPolicyReset(headers);
		if (retryAfter == null || reset == null) {
			return (retryAfter != null) ? retryAfter : reset;
		}
		return (retryAfter.compareTo(reset) >= 0) ? retryAfter : reset;
	}

	/**
	 * {@code Retry-After} as a delay. An HTTP-date is measured from the response's
	 * {@code Date}, which shares the server's clock, or from {@code now} without one; a date
	 * in the past means no wait.
	 */
	static Duration retryAfter(HttpHeaders headers, Instant now) {
		String value = headers.getFirst(RETRY_AFTER);
		if (value == null || value.isBlank()) {
			return null;
		}
		value = value.trim();
		if (isDigits(value)) {
			// more digits than a long holds is still a demand to wait longer than anyone will
			return (value.length() > 18) ? Duration.ofSeconds(Long.MAX_VALUE)
					: Duration.ofSeconds(Long.parseLong(value));
		}
		Instant retryAt = httpDate(value);
		if (retryAt == null) {
			return null;
		}
		Instant sent = httpDate(headers.getFirst(HttpHeaders.DATE));
		Duration delay = Duration.between((sent != null) ? sent : now, retryAt);
		return delay.isNegative() ? Duration.ZERO : delay;
	}

	/**
	 * The largest {@code t} among the {@code RateLimit} policies with no quota left
	 * ({@code r=0}): every one of them has to reset before a request can pass. Policies with
	 * quota left say nothing about this response. A field that does not parse is ignored
	 * entirely, as RFC 9651 requires.
	 */
	static Duration exhaustedPolicyReset(HttpHeaders headers) {
		List<String> lines = headers.get(RATE_LIMIT);
		if (lines == null || lines.isEmpty()) {
			return null;
		}
		List<Map<String, Object>> policies = new StructuredList(String.join(",", lines)).parse();
		long longest = -1;
		for (Map<String, Object> parameters : (policies != null) ? policies : List.<Map<String, Object>>of()) {
			if (parameters.get("r") instanceof Long remaining && remaining <= 0
					&& parameters.get("t") instanceof Long reset && reset >= 0) {
				longest = Math.max(longest, reset);
			}
		}
		return (longest >= 0) ? Duration.ofSeconds(longest) : null;
	}

	static Instant httpDate(String value) {
		if (value == null) {
			return null;
		}
		for (DateTimeFormatter format : HTTP_DATES) {
			try {
				return ZonedDateTime.parse(value.trim(), format).toInstant();
			}
			catch (DateTimeParseException ex) {
				// the next form
			}
		}
		return null;
	}

	private static boolean isDigits(String value) {
		for (int i = 0; i < value.length(); i++) {
			if (value.charAt(i) < '0' || value.charAt(i) > '9') {
				return false;
			}
		}
		return true;
	}

	/**
	 * A parser of an RFC 9651 list of items, keeping each member's parameters: integers as
	 * {@link Long}, strings and tokens as {@link String}, booleans as {@link Boolean}. Inner
	 * lists, decimals and the other bare item types are skipped over as opaque values.
	 */
	private static final class StructuredList {

		private final String input;

		private int position;

		StructuredList(String input) {
			this.input = input;
		}

		/** The members' parameters, or {@code null} when the field is not a valid list. */
		List<Map<String, Object>> parse() {
			List<Map<String, Object>> members = new ArrayList<>();
			try {
				skipSpaces();
				while (!atEnd()) {
					if (peek() == '(') {
						skipInnerList();
					}
					else {
						bareItem();
					}
					members.add(parameters());
					skipWhitespace();
					if (atEnd()) {
						return members;
					}
					expect(',');
					skipWhitespace();
					if (atEnd()) {
						return null;
					}
				}
				return members;
			}
			catch (IllegalArgumentException ex) {
				return null;
			}
		}

		private void skipInnerList() {
			expect('(');
			while (true) {
				skipSpaces();
				if (peek() == ')') {
					this.position++;
					return;
				}
				bareItem();
				parameters();
				if (peek() != ' ' && peek() != ')') {
					throw new IllegalArgumentException("inner list");
				}
			}
		}

		private Map<String, Object> parameters() {
			Map<String, Object> parameters = new HashMap<>();
			while (!atEnd() && peek() == ';') {
				this.position++;
				skipSpaces();
				String key = key();
				Object value = Boolean.TRUE;
				if (!atEnd() && peek() == '=') {
					this.position++;
					value = bareItem();
				}
				parameters.put(key, value);
			}
			return parameters;
		}

		private String key() {
			int start = this.position;
			char first = peek();
			if (!(first >= 'a' && first <= 'z') && first != '*') {
				throw new IllegalArgumentException("key");
			}
			while (!atEnd() && isKeyChar(peek())) {
				this.position++;
			}
			return this.input.substring(start, this.position);
		}

		private Object bareItem() {
			char c = peek();
			if (c == '-' || (c >= '0' && c <= '9')) {
				return number();
			}
			if (c == '"') {
				return string();
			}
			if (c == '?') {
				this.position++;
				char b = next();
				if (b != '0' && b != '1') {
					throw new IllegalArgumentException("boolean");
				}
				return b == '1';
			}
			if (c == '*' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) {
				return token();
			}
			if (c == ':') {
				// a byte sequence: opaque here
				this.position++;
				while (next() != ':') {
					// skipped
				}
				return "";
			}
			throw new IllegalArgumentException("bare item");
		}

		private Object number() {
			int start = this.position;
			if (peek() == '-') {
				this.position++;
			}
			boolean decimal = false;
			while (!atEnd() && ((peek() >= '0' && peek() <= '9') || peek() == '.')) {
				decimal |= next() == '.';
			}
			String text = this.input.substring(start, this.position);
			int digits = text.length() - (text.startsWith("-") ? 1 : 0) - (decimal ? 1 : 0);
			if (digits == 0 || digits > 15 || text.endsWith(".")) {
				throw new IllegalArgumentException("number");
			}
			return decimal ? Double.valueOf(text) : (Object) Long.valueOf(text);
		}

		private String string() {
			expect('"');
			StringBuilder value = new StringBuilder();
			while (true) {
				char c = next();
				if (c == '"') {
					return value.toString();
				}
				if (c == '\\') {
					c = next();
					if (c != '"' && c != '\\') {
						throw new IllegalArgumentException("escape");
					}
				}
				else if (c < 0x20 || c > 0x7e) {
					throw new IllegalArgumentException("string");
				}
				value.append(c);
			}
		}

		private String token() {
			int start = this.position;
			this.position++;
			while (!atEnd() && isTokenChar(peek())) {
				this.position++;
			}
			return this.input.substring(start, this.position);
		}

		private static boolean isKeyChar(char c) {
			return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-' || c == '.'
					|| c == '*';
		}

		private static boolean isTokenChar(char c) {
			return (c > 0x20 && c < 0x7f) && "\"(),;<=>?@[\\]{}".indexOf(c) < 0;
		}

		private void skipSpaces() {
			while (!atEnd() && peek() == ' ') {
				this.position++;
			}
		}

		private void skipWhitespace() {
			while (!atEnd() && (peek() == ' ' || peek() == '\t')) {
				this.position++;
			}
		}

		private void expect(char c) {
			if (next() != c) {
				throw new IllegalArgumentException("expected " + c);
			}
		}

		private char next() {
			char c = peek();
			this.position++;
			return c;
		}

		private char peek() {
			if (atEnd()) {
				throw new IllegalArgumentException("end of input");
			}
			return this.input.charAt(this.position);
		}

		private boolean atEnd() {
			return this.position >= this.input.length();
		}

	}

}
