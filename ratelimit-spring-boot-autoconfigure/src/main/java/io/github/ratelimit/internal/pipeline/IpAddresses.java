package io.github.ratelimit.internal.pipeline;

/**
 * Parses and formats IP address literals as raw bytes. Written by hand because
 * {@link java.net.InetAddress#getByName(String)} falls back to a DNS lookup for anything
 * it does not recognise as a literal, and text from request headers must never reach it.
 */
final class IpAddresses {

	/** Longest IPv6 literal: eight groups of four digits, or six groups and a dotted quad. */
	static final int MAX_LITERAL_LENGTH = 45;

	private IpAddresses() {
	}

	/**
	 * Parses a strict IPv4 dotted quad or an IPv6 literal (without brackets or zone id).
	 * @param text the text
	 * @return 4 or 16 bytes, or {@code null} when the text is not an IP literal
	 */
	static byte[] parse(String text) {
		if (text.isEmpty() || text.length() > MAX_LITERAL_LENGTH) {
			return null;
		}
		return (text.indexOf(':') >= 0) ? parseIpv6(text) : parseIpv4(text);
	}

	/**
	 * Returns the IPv4 address embedded in an IPv4-mapped IPv6 address
	 * ({@code ::ffff:a.b.c.d}), so that such peers match IPv4 ranges and share keys with
	 * plain IPv4 clients.
	 * @param address 4 or 16 bytes
	 * @return the IPv4 bytes for a mapped address, otherwise {@code address} itself
	 */
	static byte[] unmap(byte[] address) {
		if (address.length != 16) {
			return address;
		}
		for (int i = 0; i < 10; i++) {
			if (address[i] != 0) {
				return address;
			}
		}
		if (address[10] != (byte) 0xff || address[11] != (byte) 0xff) {
			return address;
		}
		return new byte[] { address[12], address[13], address[14], address[15] };
	}

	/**
	 * Returns the IPv4-mapped IPv6 form of an IPv4 address.
	 * @param ipv4 4 bytes
	 * @return 16 bytes
	 */
	static byte[] map(byte[] ipv4) {
		byte[] mapped = new byte[16];
		mapped[10] = (byte) 0xff;
		mapped[11] = (byte) 0xff;
		System.arraycopy(ipv4, 0, mapped, 12, 4);
		return mapped;
	}

	/**
	 * Clears every bit after the first {@code prefixLength} bits.
	 * @param address the address
	 * @param prefixLength bits to keep
	 * @return a masked copy
	 */
	static byte[] mask(byte[] address, int prefixLength) {
		byte[] masked = new byte[address.length];
		for (int i = 0; i < address.length; i++) {
			int bits = Math.max(0, Math.min(8, prefixLength - i * 8));
			masked[i] = (byte) (address[i] & (0xff00 >> bits));
		}
		return masked;
	}

	/**
	 * Formats an address: IPv4 as a dotted quad, IPv6 in the canonical compressed form of
	 * RFC 5952 (lowercase, no leading zeros, the longest run of zero groups as {@code ::}).
	 * @param address 4 or 16 bytes
	 * @return the text
	 */
	static String format(byte[] address) {
		if (address.length == 4) {
			return (address[0] & 0xff) + "." + (address[1] & 0xff) + "." + (address[2] & 0xff) + "."
					+ (address[3] & 0xff);
		}
		int[] groups = new int[8];
		for (int i = 0; i < 8; i++) {
			groups[i] = ((address[2 * i] & 0xff) << 8) | (address[2 * i + 1] & 0xff);
		}
		int bestStart = -1;
		int bestLength = 1;
		for (int i = 0; i < 8; i++) {
			int length = 0;
			while (i + length < 8 && groups[i + length] == 0) {
				length++;
			}
			if (length > bestLength) {
				bestStart = i;
				bestLength = length;
			}
			i += length;
		}
		StringBuilder text = new StringBuilder(39);
		for (int i = 0; i < 8; i++) {
			if (i == bestStart) {
				text.append("::");
				i += bestLength - 1;
				continue;
			}
			if (text.length() > 0 && text.charAt(text.length() - 1) != ':') {
				text.append(':');
			}
			text.append(Integer.toHexString(groups[i]));
		}
		return text.toString();
	}

	/**
	 * Whether a text is an IPv4 address in its canonical form (four decimal octets
	 * without leading zeros), as {@link #parse} would read it; nothing is allocated.
	 * @param text the text
	 * @return whether it is a canonical dotted quad
	 */
	static boolean isIpv4(String text) {
		return text.length() <= MAX_LITERAL_LENGTH && readIpv4(text, null);
	}

	/**
	 * Four dotted decimal octets, each 0 to 255 without leading zeros; read in one pass,
	 * since every request's client address goes through here.
	 */
	private static byte[] parseIpv4(String text) {
		byte[] bytes = new byte[4];
		return readIpv4(text, bytes) ? bytes : null;
	}

	/** Reads a dotted quad into {@code bytes} when given; whether it is one. */
	private static boolean readIpv4(String text, byte[] bytes) {
		int octet = 0;
		int start = 0;
		for (int i = 0; i <= text.length(); i++) {
			if (i < text.length() && text.charAt(i) != '.') {
				continue;
			}
			if (octet == 4) {
				return false;
			}
			int value = parseOctet(text, start, i);
			if (value < 0) {
				return false;
			}
			if (bytes != null) {
				bytes[octet] = (byte) value;
			}
			octet++;
			start = i + 1;
		}
		return octet == 4;
	}

	/**
	 * The octet written in {@code text} from {@code start} to {@code end}: decimal 0..255
	 * without leading zeros, which some parsers read as octal; -1 if it is none.
	 */
	private static int parseOctet(String text, int start, int end) {
		int length = end - start;
		if (length == 0 || length > 3 || (length > 1 && text.charAt(start) == '0')) {
			return -1;
		}
		int value = 0;
		for (int i = start; i < end; i++) {
			char c = text.charAt(i);
			if (c < '0' || c > '9') {
				return -1;
			}
			value = value * 10 + (c - '0');
		}
		return (value <= 255) ? value : -1;
	}

	private static byte[] parseIpv6(String text) {
		int gap = text.indexOf("::");
		if (gap >= 0 && text.indexOf("::", gap + 1) >= 0) {
			return null;
		}
		String head = (gap >= 0) ? text.substring(0, gap) : text;
		String tail = (gap >= 0) ? text.substring(gap + 2) : "";
		byte[] headBytes = parseGroups(head, gap < 0);
		byte[] tailBytes = parseGroups(tail, true);
		if (headBytes == null || tailBytes == null) {
			return null;
		}
		int length = headBytes.length + tailBytes.length;
		if ((gap < 0) ? length != 16 : length > 14) {
			return null;
		}
		byte[] bytes = new byte[16];
		System.arraycopy(headBytes, 0, bytes, 0, headBytes.length);
		System.arraycopy(tailBytes, 0, bytes, 16 - tailBytes.length, tailBytes.length);
		return bytes;
	}

	/**
	 * Parses colon-separated hex groups; the last one may be a dotted quad when
	 * {@code ipv4Allowed}.
	 */
	private static byte[] parseGroups(String text, boolean ipv4Allowed) {
		if (text.isEmpty()) {
			return new byte[0];
		}
		String[] parts = text.split(":", -1);
		if (parts.length > 8) {
			return null;
		}
		String last = parts[parts.length - 1];
		boolean endsWithIpv4 = ipv4Allowed && last.indexOf('.') >= 0;
		int hexGroups = endsWithIpv4 ? parts.length - 1 : parts.length;
		byte[] bytes = new byte[hexGroups * 2 + (endsWithIpv4 ? 4 : 0)];
		for (int i = 0; i < hexGroups; i++) {
			int group = parseHexGroup(parts[i]);
			if (group < 0) {
				return null;
			}
			bytes[2 * i] = (byte) (group >> 8);
			bytes[2 * i + 1] = (byte) group;
		}
		if (endsWithIpv4) {
			byte[] ipv4 = parseIpv4(last);
			if (ipv4 == null) {
				return null;
			}
			System.arraycopy(ipv4, 0, bytes, hexGroups * 2, 4);
		}
		return bytes;
	}

	private static int parseHexGroup(String part) {
		if (part.isEmpty() || part.length() > 4) {
			return -1;
		}
		int value = 0;
		for (int i = 0; i < part.length(); i++) {
			int digit = hexDigit(part.charAt(i));
			if (digit < 0) {
				return -1;
			}
			value = (value << 4) | digit;
		}
		return value;
	}

	/** ASCII only: {@link Character#digit(char, int)} would accept full-width digits. */
	private static int hexDigit(char c) {
		if (c >= '0' && c <= '9') {
			return c - '0';
		}
		if (c >= 'a' && c <= 'f') {
			return c - 'a' + 10;
		}
		if (c >= 'A' && c <= 'F') {
			return c - 'A' + 10;
		}
		return -1;
	}

}
