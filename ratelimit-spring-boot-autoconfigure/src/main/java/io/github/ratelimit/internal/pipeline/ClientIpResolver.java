package io.github.ratelimit.internal.pipeline;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

import io.github.ratelimit.RateLimitRequest;

/**
 * Resolves the client IP address of a request for use in a rate limit key.
 * <p>
 * The peer address ({@link RateLimitRequest#remoteAddress()}) is the client unless it
 * lies in one of the trusted proxy ranges. Only then are forwarding headers believed:
 * RFC 7239 {@code Forwarded} when the request has one, otherwise
 * {@code X-Forwarded-For}. Their entries are walked from right to left, skipping trusted
 * hops; the first untrusted entry is the client. The leftmost entry, which the client
 * itself can write, is never taken on trust. When an entry is not an IP literal
 * ({@code unknown}, {@code _hidden}, a host name, garbage) the walk stops and the last
 * address seen, a trusted hop, is the client. When every entry is trusted, the leftmost
 * one is the client.
 * <p>
 * IPv4 addresses (including IPv4-mapped IPv6 addresses) are returned as dotted quads.
 * IPv6 addresses are aggregated to the configured prefix, since a single subscriber
 * usually holds a whole {@code /64} or more, and returned as the network in compressed
 * form followed by the prefix, such as {@code 2001:db8:1:2::/64}; with a prefix of 128
 * the address alone is returned. Resolution never throws and never performs a DNS
 * lookup.
 */
public final class ClientIpResolver {

	/** Forwarding entries examined per request, counted from the right. */
	static final int MAX_ENTRIES = 32;

	/** Longest forwarding entry considered: a bracketed IPv6 literal, a port and quotes. */
	static final int MAX_ENTRY_LENGTH = 64;

	private static final String FORWARDED = "Forwarded";

	private static final String X_FORWARDED_FOR = "X-Forwarded-For";

	private static final String UNKNOWN = "unknown";

	private final List<IpRange> trustedProxies;

	private final int ipv6PrefixLength;

	/**
	 * Creates a resolver.
	 * @param trustedProxies ranges of the proxies whose forwarding headers are believed
	 * @param ipv6PrefixLength number of leading bits of an IPv6 address that identify a
	 * client, 1 to 128
	 */
	public ClientIpResolver(List<IpRange> trustedProxies, int ipv6PrefixLength) {
		Objects.requireNonNull(trustedProxies, "trustedProxies must not be null");
		if (ipv6PrefixLength < 1 || ipv6PrefixLength > 128) {
			throw new IllegalArgumentException("ipv6PrefixLength must be between 1 and 128, for example 64 "
					+ "(ratelimit.client-ip.ipv6-prefix-length): " + ipv6PrefixLength);
		}
		this.trustedProxies = List.copyOf(trustedProxies);
		this.ipv6PrefixLength = ipv6PrefixLength;
	}

	/**
	 * Whether the client of a request is its peer whatever its headers say: no proxy is
	 * trusted, so the address resolved depends on the peer address alone.
	 * @return whether no proxy is trusted
	 */
	boolean trustsNoProxy() {
		return this.trustedProxies.isEmpty();
	}

	/**
	 * Resolves the client IP address of a request.
	 * @param request the request
	 * @return the normalised client address, or the sanitised remote address (or
	 * {@code unknown}) when the container reports something that is not an IP literal
	 */
	public String resolve(RateLimitRequest request) {
		String remoteAddr = request.remoteAddress();
		if (this.trustedProxies.isEmpty() && remoteAddr != null && IpAddresses.isIpv4(remoteAddr)) {
			// no proxy to believe, and a dotted quad is its own canonical form: nothing to parse
			return remoteAddr;
		}
		byte[] peer = parseRemoteAddr(remoteAddr);
		if (peer == null) {
			return sanitize(remoteAddr);
		}
		if (isTrusted(peer)) {
			return format(walk(request, peer));
		}
		// a dotted quad parses only in its canonical form, which is then its own formatting
		return (peer.length == 4 && remoteAddr.charAt(0) != '[') ? remoteAddr : format(peer);
	}

	private byte[] walk(RateLimitRequest request, byte[] peer) {
		List<String> forwarded = headerLines(request, FORWARDED);
		boolean useForwarded = !forwarded.isEmpty();
		List<String> lines = useForwarded ? forwarded : headerLines(request, X_FORWARDED_FOR);
		byte[] client = peer;
		int examined = 0;
		for (int i = lines.size() - 1; i >= 0; i--) {
			String line = lines.get(i);
			int end = line.length();
			while (end >= 0) {
				if (++examined > MAX_ENTRIES) {
					// every hop examined was trusted: the leftmost of them is the client
					return client;
				}
				int comma = line.lastIndexOf(',', end - 1);
				String element = trim(line.substring(comma + 1, end));
				end = comma;
				if (element.isEmpty()) {
					// RFC 9110 list syntax: empty elements are ignored
					continue;
				}
				byte[] hop = parseHop(useForwarded ? forValue(element) : element);
				if (hop == null) {
					return client;
				}
				client = hop;
				if (!isTrusted(hop)) {
					return client;
				}
			}
		}
		return client;
	}

	private boolean isTrusted(byte[] address) {
		for (int i = 0; i < this.trustedProxies.size(); i++) {
			if (this.trustedProxies.get(i).contains(address)) {
				return true;
			}
		}
		return false;
	}

	private String format(byte[] address) {
		byte[] ipv4 = IpAddresses.unmap(address);
		if (ipv4.length == 4) {
			return IpAddresses.format(ipv4);
		}
		if (this.ipv6PrefixLength == 128) {
			return IpAddresses.format(address);
		}
		return IpAddresses.format(IpAddresses.mask(address, this.ipv6PrefixLength)) + "/" + this.ipv6PrefixLength;
	}

	/** Header lines that are not blank, in the order received. */
	private static List<String> headerLines(RateLimitRequest request, String name) {
		List<String> values = request.headers(name);
		if (values == null || values.isEmpty()) {
			return List.of();
		}
		List<String> lines = new ArrayList<>(values.size());
		for (String value : values) {
			if (value != null && !trim(value).isEmpty()) {
				lines.add(value);
			}
		}
		return lines;
	}

	/**
	 * The value of the {@code for} parameter of one {@code Forwarded} element, unquoted,
	 * or {@code null} when it is missing or repeated. Commas inside quoted strings are not
	 * supported: an element split at one does not parse and stops the walk.
	 */
	private static String forValue(String element) {
		String value = null;
		for (String pair : element.split(";", -1)) {
			int equals = pair.indexOf('=');
			if (equals < 0 || !trim(pair.substring(0, equals)).equalsIgnoreCase("for")) {
				continue;
			}
			if (value != null) {
				return null;
			}
			value = trim(pair.substring(equals + 1));
			if (value.length() >= 2 && value.charAt(0) == '"' && value.charAt(value.length() - 1) == '"') {
				value = value.substring(1, value.length() - 1);
			}
		}
		return value;
	}

	/**
	 * Parses one forwarding entry: an IPv4 literal with an optional port, an IPv6 literal,
	 * or an IPv6 literal in brackets with an optional port.
	 * @return the address, or {@code null} when the entry is anything else
	 */
	private static byte[] parseHop(String entry) {
		if (entry == null || entry.isEmpty() || entry.length() > MAX_ENTRY_LENGTH) {
			return null;
		}
		String address = entry;
		String port = null;
		if (entry.charAt(0) == '[') {
			int close = entry.indexOf(']');
			if (close < 0) {
				return null;
			}
			address = entry.substring(1, close);
			String rest = entry.substring(close + 1);
			if (!rest.isEmpty()) {
				if (rest.charAt(0) != ':') {
					return null;
				}
				port = rest.substring(1);
			}
		}
		else if (entry.indexOf(':') >= 0 && entry.indexOf(':') == entry.lastIndexOf(':')) {
			// a single colon can only separate an IPv4 address from its port
			int colon = entry.indexOf(':');
			address = entry.substring(0, colon);
			port = entry.substring(colon + 1);
		}
		if (port != null && !isPort(port)) {
			return null;
		}
		return IpAddresses.parse(address);
	}

	/** A decimal port, or an RFC 7239 obfuscated port such as {@code _8080}. */
	private static boolean isPort(String port) {
		if (port.isEmpty() || port.length() > 16) {
			return false;
		}
		boolean obfuscated = port.charAt(0) == '_';
		if (!obfuscated && port.length() > 5) {
			return false;
		}
		for (int i = obfuscated ? 1 : 0; i < port.length(); i++) {
			char c = port.charAt(i);
			boolean digit = c >= '0' && c <= '9';
			boolean obfuscatedChar = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '.' || c == '_'
					|| c == '-';
			if (!digit && !(obfuscated && obfuscatedChar)) {
				return false;
			}
		}
		return obfuscated || Integer.parseInt(port) <= 65535;
	}

	/**
	 * Parses the container's remote address, which is trusted to be well formed but may
	 * come in brackets or carry the zone id of a link-local peer; neither matters for
	 * rate limiting.
	 */
	private static byte[] parseRemoteAddr(String remoteAddr) {
		if (remoteAddr == null) {
			return null;
		}
		String address = remoteAddr;
		if (address.length() > 2 && address.charAt(0) == '[' && address.charAt(address.length() - 1) == ']') {
			address = address.substring(1, address.length() - 1);
		}
		int zone = address.indexOf('%');
		if (zone >= 0 && address.indexOf(':') >= 0) {
			address = address.substring(0, zone);
		}
		return IpAddresses.parse(address);
	}

	private static String sanitize(String remoteAddr) {
		if (remoteAddr == null) {
			return UNKNOWN;
		}
		StringBuilder sanitized = new StringBuilder(IpAddresses.MAX_LITERAL_LENGTH);
		for (int i = 0; i < remoteAddr.length() && sanitized.length() < IpAddresses.MAX_LITERAL_LENGTH; i++) {
			char c = remoteAddr.charAt(i);
			if ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F') || c == '.' || c == ':') {
				sanitized.append(c);
			}
		}
		return (sanitized.length() > 0) ? sanitized.toString() : UNKNOWN;
	}

	/** Strips optional whitespace (space and horizontal tab) only; control characters stay and fail parsing. */
	private static String trim(String text) {
		int start = 0;
		int end = text.length();
		while (start < end && isOptionalWhitespace(text.charAt(start))) {
			start++;
		}
		while (end > start && isOptionalWhitespace(text.charAt(end - 1))) {
			end--;
		}
		return text.substring(start, end);
	}

	private static boolean isOptionalWhitespace(char c) {
		return c == ' ' || c == '\t';
	}

}
