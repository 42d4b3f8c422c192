package io.github.ratelimit.internal.pipeline;

import java.net.InetAddress;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

import static org.assertj.core.api.Assertions.assertThat;

class IpAddressesTests {

	@ParameterizedTest
	@CsvSource({ "0.0.0.0, 0.0.0.0", "255.255.255.255, 255.255.255.255", "::, ::", "::1, ::1",
			"2001:DB8:0:0:0:0:0:1, 2001:db8::1", "2001:db8:0:0:1:0:0:1, 2001:db8::1:0:0:1",
			"2001:0db8:0000:0001:0000:0000:0000:0000, 2001:db8:0:1::", "1:0:2:3:4:5:6:7, 1:0:2:3:4:5:6:7",
			"1:2:3:4:5:6:7::, 1:2:3:4:5:6:7:0", "::ffff:1.2.3.4, ::ffff:102:304", "64:ff9b::192.0.2.33, 64:ff9b::c000:221" })
	void formatsInCanonicalCompressedForm(String literal, String canonical) throws Exception {
		byte[] bytes = IpAddresses.parse(literal);
		// the JDK parses valid literals without a lookup and unmaps IPv4-mapped addresses
		assertThat(IpAddresses.unmap(bytes)).isEqualTo(InetAddress.getByName(literal).getAddress());
		assertThat(IpAddresses.format(bytes)).isEqualTo(canonical);
	}

	@ParameterizedTest
	@ValueSource(strings = { "", ".", ":", ":::", "1.2.3", "1.2.3.4.", "01.2.3.4", "1.2.3.4 ", "256.0.0.0",
			"\uff11.2.3.4", "1:2:3:4:5:6:7:8:9", "1:2:3:4:5:6:7:8::", "::1:2:3:4:5:6:7:8", ":1::", "1::2::3",
			"g::1", "1.2.3.4::", "::1.2.3", "fe80::1%eth0", "[::1]", "localhost", "12345::",
			"0000:0000:0000:0000:0000:0000:0000:0000:0000" })
	void rejectsTextThatIsNotAnAddressLiteral(String text) {
		assertThat(IpAddresses.parse(text)).isNull();
		assertThat(IpAddresses.isIpv4(text)).isFalse();
	}

	@ParameterizedTest
	@ValueSource(strings = { "0.0.0.0", "1.2.3.4", "10.0.0.255", "127.0.0.1", "203.0.113.7", "255.255.255.255",
			"1.2.3.04", "1.2.3.256", "1.2.3.-1", "1.2..3", "1.2.3.4.5", "::1", "::ffff:1.2.3.4", "1.2.3.4a",
			" 1.2.3.4", "1.2.3.1000", "9.9.9.9" })
	void tellsACanonicalDottedQuadWithoutParsingItAsParsingDoes(String text) {
		byte[] parsed = IpAddresses.parse(text);
		assertThat(IpAddresses.isIpv4(text)).isEqualTo(parsed != null && parsed.length == 4);
	}

}
