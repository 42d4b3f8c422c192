package io.github.ratelimit.internal.pipeline;

import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.UnknownHostException;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

class IpRangeTests {

	@Test
	void containsIpv4AddressesInsideThePrefix() {
		IpRange range = IpRange.parse("10.0.0.0/8");
		assertThat(range.contains(address("10.0.0.0"))).isTrue();
		assertThat(range.contains(address("10.255.255.255"))).isTrue();
		assertThat(range.contains(address("11.0.0.0"))).isFalse();
		assertThat(range.contains(address("9.255.255.255"))).isFalse();
	}

	@Test
	void containsWithPrefixThatIsNotAMultipleOfEight() {
		IpRange range = IpRange.parse("192.168.4.0/22");
		assertThat(range.contains(address("192.168.4.1"))).isTrue();
		assertThat(range.contains(address("192.168.7.255"))).isTrue();
		assertThat(range.contains(address("192.168.8.0"))).isFalse();
		assertThat(range.contains(address("192.168.3.255"))).isFalse();
	}

	@Test
	void treatsSingleAddressAsHostRange() {
		assertThat(IpRange.parse("203.0.113.7")).hasToString("203.0.113.7/32");
		assertThat(IpRange.parse("2001:db8::1")).hasToString("2001:db8::1/128");
		assertThat(IpRange.parse("203.0.113.7").contains(address("203.0.113.8"))).isFalse();
	}

	@Test
	void containsIpv6AddressesInsideThePrefix() {
		IpRange range = IpRange.parse("2001:db8::/32");
		assertThat(range.contains(address("2001:db8::1"))).isTrue();
		assertThat(range.contains(address("2001:db8:ffff:ffff:ffff:ffff:ffff:ffff"))).isTrue();
		assertThat(range.contains(address("2001:db9::1"))).isFalse();
		assertThat(range.contains(address("10.0.0.1"))).isFalse();
	}

	@Test
	void doesNotMatchIpv6AddressAgainstIpv4Range() {
		assertThat(IpRange.parse("0.0.0.0/0").contains(address("2001:db8::1"))).isFalse();
	}

	@Test
	void matchesIpv4MappedIpv6AddressAgainstIpv4Range() {
		IpRange range = IpRange.parse("10.0.0.0/8");
		assertThat(range.contains(address("::ffff:10.0.0.1"))).isTrue();
		assertThat(range.contains(mappedAddress(10, 0, 0, 1))).isTrue();
		assertThat(range.contains(address("::ffff:11.0.0.1"))).isFalse();
	}

	@Test
	void readsIpv4MappedRangeAsIpv4Range() {
		IpRange range = IpRange.parse("::ffff:10.0.0.0/104");
		assertThat(range).isEqualTo(IpRange.parse("10.0.0.0/8")).hasToString("10.0.0.0/8");
		assertThat(range.contains(address("10.1.2.3"))).isTrue();
	}

	@Test
	void ignoresHostBitsAfterThePrefix() {
		assertThat(IpRange.parse("10.1.2.3/8")).isEqualTo(IpRange.parse("10.0.0.0/8")).hasToString("10.0.0.0/8");
		assertThat(IpRange.parse("2001:DB8:0:0:1::/32")).hasToString("2001:db8::/32");
	}

	@Test
	void acceptsSurroundingWhitespaceAndZeroPrefix() {
		IpRange everything = IpRange.parse(" 0.0.0.0/0 ");
		assertThat(everything.contains(address("198.51.100.1"))).isTrue();
		assertThat(IpRange.parse("::/0").contains(address("2001:db8::1"))).isTrue();
	}

	@Test
	void rejectsPrefixLongerThanTheAddressFamily() {
		assertThatIllegalArgumentException().isThrownBy(() -> IpRange.parse("10.0.0.0/33"))
			.withMessage("Invalid CIDR '10.0.0.0/33': prefix length must be between 0 and 32 for IPv4; "
					+ "use a form like 10.0.0.0/8 or 2001:db8::/32");
		assertThatIllegalArgumentException().isThrownBy(() -> IpRange.parse("2001:db8::/129"))
			.withMessageContaining("'2001:db8::/129'")
			.withMessageContaining("between 0 and 128 for IPv6");
	}

	@ParameterizedTest
	@ValueSource(strings = { "10.0.0.0/", "10.0.0.0/-1", "10.0.0.0/8/8", "10.0.0.0/abc", "10.0.0.0/ 8" })
	void rejectsPrefixThatIsNotANumber(String cidr) {
		assertThatIllegalArgumentException().isThrownBy(() -> IpRange.parse(cidr))
			.withMessageStartingWith("Invalid CIDR '" + cidr + "': prefix length must be between 0 and 32")
			.withMessageEndingWith("use a form like 10.0.0.0/8 or 2001:db8::/32");
	}

	@ParameterizedTest
	@ValueSource(strings = { "", "/8", "10.0.0/8", "10.0.0.256/32", "10.0.0.0.0", "010.0.0.1", "1.2.3.-4",
			"2001:db8:::/32", "2001:db8::1::/64", "1:2:3:4:5:6:7:8:9", "12345::", "[2001:db8::]/32", "10.0.0.1:80" })
	void rejectsValuesThatAreNotAddresses(String cidr) {
		assertThatIllegalArgumentException().isThrownBy(() -> IpRange.parse(cidr))
			.withMessageStartingWith("Invalid CIDR '" + cidr + "': ")
			.withMessageContaining("is not an IPv4 or IPv6 address");
	}

	@ParameterizedTest
	@ValueSource(strings = { "localhost", "evil.example.com/32", "proxy.internal", "abc.def.ghi.jkl" })
	void rejectsHostNamesWithoutResolvingThem(String cidr) {
		// a DNS lookup would resolve "localhost"; parsing must refuse it as text
		assertThatIllegalArgumentException().isThrownBy(() -> IpRange.parse(cidr))
			.withMessageContaining("host names are not accepted");
	}

	@Test
	void rejectsZoneIds() {
		assertThatIllegalArgumentException().isThrownBy(() -> IpRange.parse("fe80::1%eth0"))
			.withMessageContaining("zone ids are not supported");
	}

	@Test
	void rejectsNull() {
		assertThatIllegalArgumentException().isThrownBy(() -> IpRange.parse(null))
			.withMessageStartingWith("Invalid CIDR 'null'");
	}

	private static InetAddress address(String literal) {
		byte[] bytes = IpAddresses.parse(literal);
		assertThat(bytes).as(literal).isNotNull();
		try {
			return InetAddress.getByAddress(bytes);
		}
		catch (UnknownHostException ex) {
			throw new IllegalStateException(ex);
		}
	}

	/** An Inet6Address holding a mapped address: getByAddress would turn it into an Inet4Address. */
	private static InetAddress mappedAddress(int a, int b, int c, int d) {
		byte[] bytes = IpAddresses.map(new byte[] { (byte) a, (byte) b, (byte) c, (byte) d });
		try {
			return Inet6Address.getByAddress(null, bytes, -1);
		}
		catch (UnknownHostException ex) {
			throw new IllegalStateException(ex);
		}
	}

}
