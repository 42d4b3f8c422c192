package io.github.ratelimit.internal.pipeline;

import java.net.InetAddress;
import java.util.Arrays;
import java.util.Objects;

/**
 * An IPv4 or IPv6 address block in CIDR notation, such as {@code 10.0.0.0/8} or
 * {@code 2001:db8::/32}; a single address stands for {@code /32} or {@code /128}.
 * <p>
 * Only IP literals are accepted, never host names, so parsing never performs a DNS
 * lookup. Host bits after the prefix are ignored ({@code 10.1.2.3/8} is
 * {@code 10.0.0.0/8}). An IPv4-mapped IPv6 address ({@code ::ffff:10.0.0.1}) matches IPv4
 * ranges, and an IPv4-mapped range ({@code ::ffff:10.0.0.0/104}) is the IPv4 range
 * {@code 10.0.0.0/8}.
 */
public final class IpRange {

	private final byte[] network;

	private final int prefixLength;

	private IpRange(byte[] network, int prefixLength) {
		this.network = IpAddresses.mask(network, prefixLength);
		this.prefixLength = prefixLength;
	}

	/**
	 * Parses a CIDR block or a single address.
	 * @param cidr the text, for example {@code 192.168.0.0/16}, {@code 10.0.0.1} or
	 * {@code fd00::/8}
	 * @return the range
	 * @throws IllegalArgumentException if the text is not an IP literal with an optional
	 * prefix length that fits the address family
	 */
	public static IpRange parse(String cidr) {
		if (cidr == null) {
			throw invalid(null, "a value is required");
		}
		String text = cidr.strip();
		int slash = text.indexOf('/');
		String address = (slash >= 0) ? text.substring(0, slash) : text;
		if (address.indexOf('%') >= 0) {
			throw invalid(cidr, "zone ids are not supported");
		}
		byte[] bytes = IpAddresses.parse(address);
		if (bytes == null) {
			throw invalid(cidr, "'" + address + "' is not an IPv4 or IPv6 address (host names are not accepted)");
		}
		int maxPrefix = bytes.length * 8;
		String family = (bytes.length == 4) ? "IPv4" : "IPv6";
		int prefixLength = (slash >= 0) ? parsePrefixLength(text.substring(slash + 1)) : maxPrefix;
		if (prefixLength < 0 || prefixLength > maxPrefix) {
			throw invalid(cidr, "prefix length must be between 0 and " + maxPrefix + " for " + family);
		}
		byte[] ipv4 = IpAddresses.unmap(bytes);
		if (ipv4 != bytes && prefixLength >= 96) {
			return new IpRange(ipv4, prefixLength - 96);
		}
		return new IpRange(bytes, prefixLength);
	}

	/**
	 * Whether the address lies inside this range. IPv4 addresses and their IPv4-mapped
	 * IPv6 forms are treated as the same address.
	 * @param address the address
	 * @return whether the address is in the range
	 */
	public boolean contains(InetAddress address) {
		Objects.requireNonNull(address, "address must not be null");
		return contains(address.getAddress());
	}

	/**
	 * Whether the raw address lies inside this range.
	 * @param address 4 or 16 bytes
	 * @return whether the address is in the range
	 */
	boolean contains(byte[] address) {
		byte[] candidate = (this.network.length == 4) ? IpAddresses.unmap(address)
				: ((address.length == 4) ? IpAddresses.map(address) : address);
		if (candidate.length != this.network.length) {
			return false;
		}
		return Arrays.equals(IpAddresses.mask(candidate, this.prefixLength), this.network);
	}

	@Override
	public boolean equals(Object other) {
		return (this == other) || (other instanceof IpRange range && this.prefixLength == range.prefixLength
				&& Arrays.equals(this.network, range.network));
	}

	@Override
	public int hashCode() {
		return 31 * Arrays.hashCode(this.network) + this.prefixLength;
	}

	/**
	 * Returns the range in canonical CIDR notation, for example {@code 2001:db8::/32}.
	 * @return the text
	 */
	@Override
	public String toString() {
		return IpAddresses.format(this.network) + "/" + this.prefixLength;
	}

	private static int parsePrefixLength(String text) {
		if (text.isEmpty() || text.length() > 3) {
			return -1;
		}
		int value = 0;
		for (int i = 0; i < text.length(); i++) {
			char c = text.charAt(i);
			if (c < '0' || c > '9') {
				return -1;
			}
			value = value * 10 + (c - '0');
		}
		return value;
	}

	private static IllegalArgumentException invalid(String cidr, String reason) {
		return new IllegalArgumentException("Invalid CIDR '" + cidr + "': " + reason
				+ "; use a form like 10.0.0.0/8 or 2001:db8::/32");
	}

}
