package io.github.ratelimit.internal.pipeline;

import java.util.List;
import java.util.Random;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

import org.springframework.mock.web.MockHttpServletRequest;

import io.github.ratelimit.internal.web.ServletRateLimitRequest;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.assertThatNullPointerException;

class ClientIpResolverTests {

	private static final String XFF = "X-Forwarded-For";

	private static final String FORWARDED = "Forwarded";

	private final ClientIpResolver resolver = new ClientIpResolver(
			List.of(IpRange.parse("10.0.0.0/8"), IpRange.parse("fd00::/8")), 64);

	@Test
	void usesRemoteAddressWithoutForwardingHeaders() {
		assertThat(this.resolver.resolve(new ServletRateLimitRequest(request("198.51.100.7")))).isEqualTo("198.51.100.7");
	}

	@Test
	void ignoresForwardedForFromUntrustedPeer() {
		MockHttpServletRequest request = request("203.0.113.9");
		request.addHeader(XFF, "198.51.100.7");
		assertThat(this.resolver.resolve(new ServletRateLimitRequest(request))).isEqualTo("203.0.113.9");
	}

	@Test
	void ignoresForwardedFromUntrustedPeer() {
		MockHttpServletRequest request = request("203.0.113.9");
		request.addHeader(FORWARDED, "for=198.51.100.7");
		request.addHeader(XFF, "198.51.100.8");
		assertThat(this.resolver.resolve(new ServletRateLimitRequest(request))).isEqualTo("203.0.113.9");
	}

	@Test
	void ignoresForwardingHeadersWhenNoProxyIsTrusted() {
		ClientIpResolver resolver = new ClientIpResolver(List.of(), 64);
		MockHttpServletRequest request = request("10.0.0.1");
		request.addHeader(XFF, "198.51.100.7");
		assertThat(resolver.resolve(new ServletRateLimitRequest(request))).isEqualTo("10.0.0.1");
	}

	@Test
	void takesForwardedForEntryAppendedByTrustedProxy() {
		MockHttpServletRequest request = request("10.0.0.1");
		request.addHeader(XFF, "198.51.100.7");
		assertThat(this.resolver.resolve(new ServletRateLimitRequest(request))).isEqualTo("198.51.100.7");
	}

	@Test
	void skipsSeveralTrustedHopsFromTheRight() {
		MockHttpServletRequest request = request("10.0.0.1");
		request.addHeader(XFF, "198.51.100.7,10.0.0.3 ,  10.0.0.2");
		assertThat(this.resolver.resolve(new ServletRateLimitRequest(request))).isEqualTo("198.51.100.7");
	}

	@Test
	void neverUsesLeftmostSpoofedValue() {
		MockHttpServletRequest request = request("10.0.0.1");
		// the client sent "X-Forwarded-For: 6.6.6.6, 10.0.0.9"; the proxy appended the real peer
		request.addHeader(XFF, "6.6.6.6, 10.0.0.9, 198.51.100.7");
		assertThat(this.resolver.resolve(new ServletRateLimitRequest(request))).isEqualTo("198.51.100.7");
	}

	@Test
	void usesLeftmostEntryWhenEveryHopIsTrusted() {
		MockHttpServletRequest request = request("10.0.0.1");
		request.addHeader(XFF, "10.0.0.4, 10.0.0.3, 10.0.0.2");
		assertThat(this.resolver.resolve(new ServletRateLimitRequest(request))).isEqualTo("10.0.0.4");
	}

	@Test
	void usesTrustedPeerWhenItSendsNoForwardingHeader() {
		assertThat(this.resolver.resolve(new ServletRateLimitRequest(request("10.0.0.1")))).isEqualTo("10.0.0.1");
	}

	@Test
	void readsSeveralHeaderLinesAsOneListInOrder() {
		MockHttpServletRequest request = request("10.0.0.1");
		request.addHeader(XFF, "6.6.6.6");
		request.addHeader(XFF, "198.51.100.7, 10.0.0.3");
		request.addHeader(XFF, "10.0.0.2");
		assertThat(this.resolver.resolve(new ServletRateLimitRequest(request))).isEqualTo("198.51.100.7");
	}

	@Test
	void acceptsPortsInForwardedForEntries() {
		MockHttpServletRequest request = request("10.0.0.1");
		request.addHeader(XFF, "6.6.6.6, 198.51.100.7:52311, [fd00::2]:443");
		assertThat(this.resolver.resolve(new ServletRateLimitRequest(request))).isEqualTo("198.51.100.7");
		MockHttpServletRequest ipv6 = request("10.0.0.1");
		ipv6.addHeader(XFF, "[2001:db8:1:2::7]:52311, 10.0.0.2");
		assertThat(this.resolver.resolve(new ServletRateLimitRequest(ipv6))).isEqualTo("2001:db8:1:2::/64");
	}

	@ParameterizedTest
	@ValueSource(strings = { "garbage", "unknown", "_hidden", "evil.example.com", "localhost", "fe80::1%eth0",
			"198.51.100.7\u0000", "\u0007198.51.100.7", "198.51.100.7\r\n", "198.51.100.7:99999", "198.51.100.7:",
			"[2001:db8::1", "[2001:db8::1]x", "[2001:db8::1]:", "198.51.100.7:80:90", "\"198.51.100.7\"",
			"198.51.100.007", "\uff11\uff19\uff18.51.100.7", "0x7f.0.0.1", "2130706433", "' OR 1=1 --",
			"198.51.100.7 198.51.100.8" })
	void stopsAtMalformedEntryAndUsesTheTrustedHopToItsRight(String malformed) {
		MockHttpServletRequest request = request("10.0.0.1");
		request.addHeader(XFF, "198.51.100.7, " + malformed + ", 10.0.0.2");
		assertThat(this.resolver.resolve(new ServletRateLimitRequest(request))).isEqualTo("10.0.0.2");
	}

	@Test
	void stopsAtMalformedEntryNextToThePeer() {
		MockHttpServletRequest request = request("10.0.0.1");
		request.addHeader(XFF, "198.51.100.7, unknown");
		assertThat(this.resolver.resolve(new ServletRateLimitRequest(request))).isEqualTo("10.0.0.1");
	}

	@Test
	void neverResolvesHostNames() {
		// were "localhost" looked up, it would count as a trusted hop and the walk would go on
		ClientIpResolver resolver = new ClientIpResolver(
				List.of(IpRange.parse("10.0.0.0/8"), IpRange.parse("127.0.0.0/8"), IpRange.parse("::1")), 64);
		MockHttpServletRequest request = request("10.0.0.1");
		request.addHeader(XFF, "198.51.100.7, localhost");
		assertThat(resolver.resolve(new ServletRateLimitRequest(request))).isEqualTo("10.0.0.1");
	}

	@Test
	void ignoresEmptyEntries() {
		MockHttpServletRequest request = request("10.0.0.1");
		request.addHeader(XFF, "6.6.6.6, 198.51.100.7, , 10.0.0.2,");
		request.addHeader(XFF, "  ");
		assertThat(this.resolver.resolve(new ServletRateLimitRequest(request))).isEqualTo("198.51.100.7");
	}

	@Test
	void survivesTenKilobyteGarbageHeader() {
		MockHttpServletRequest request = request("10.0.0.1");
		request.addHeader(XFF, "x".repeat(10_240) + ", 10.0.0.2");
		assertThat(this.resolver.resolve(new ServletRateLimitRequest(request))).isEqualTo("10.0.0.2");
		MockHttpServletRequest commas = request("10.0.0.1");
		commas.addHeader(XFF, ",".repeat(10_240));
		assertThat(this.resolver.resolve(new ServletRateLimitRequest(commas))).isEqualTo("10.0.0.1");
	}

	@Test
	void findsClientAtTheEndOfTenKilobyteHeader() {
		MockHttpServletRequest request = request("10.0.0.1");
		request.addHeader(XFF, "6.6.6.6, ".repeat(1_200) + "198.51.100.7, 10.0.0.2");
		assertThat(this.resolver.resolve(new ServletRateLimitRequest(request))).isEqualTo("198.51.100.7");
	}

	@Test
	void examinesAtMostThirtyTwoEntries() {
		StringBuilder header = new StringBuilder("198.51.100.7");
		for (int i = 0; i < 40; i++) {
			header.append(", 10.0.1.").append(i);
		}
		MockHttpServletRequest request = request("10.0.0.1");
		request.addHeader(XFF, header.toString());
		// entries 39 down to 8 are examined, all trusted: the leftmost examined one wins
		assertThat(this.resolver.resolve(new ServletRateLimitRequest(request))).isEqualTo("10.0.1.8");
	}

	@Test
	void neverThrowsOnRandomHeaders() {
		Random random = new Random(7239);
		String alphabet = "0123456789abcdefABCDEF.:[]%_\"=;, \t\u0000\u007f\u00e9\uff11forFOR";
		for (int i = 0; i < 5_000; i++) {
			MockHttpServletRequest request = request("10.0.0.1");
			request.addHeader((i % 2 == 0) ? XFF : FORWARDED, randomText(random, alphabet) + ", 10.0.0.2");
			request.addHeader(XFF, randomText(random, alphabet));
			assertThat(this.resolver.resolve(new ServletRateLimitRequest(request))).matches("[0-9a-f.:/]{1,43}");
		}
	}

	@Test
	void readsForParameterOfForwarded() {
		MockHttpServletRequest request = request("10.0.0.1");
		request.addHeader(FORWARDED, "for=6.6.6.6, for=198.51.100.7;proto=https;by=10.0.0.1");
		assertThat(this.resolver.resolve(new ServletRateLimitRequest(request))).isEqualTo("198.51.100.7");
	}

	@Test
	void readsQuotedIpv6AndPortsInForwarded() {
		ClientIpResolver resolver = new ClientIpResolver(List.of(IpRange.parse("10.0.0.0/8")), 128);
		MockHttpServletRequest request = request("10.0.0.1");
		request.addHeader(FORWARDED, "for=\"[2001:db8:cafe::17]:4711\";proto=https, for=\"10.0.0.2:8443\"");
		assertThat(resolver.resolve(new ServletRateLimitRequest(request))).isEqualTo("2001:db8:cafe::17");
		MockHttpServletRequest quotedIpv4 = request("10.0.0.1");
		quotedIpv4.addHeader(FORWARDED, "for=\"198.51.100.7:47011\"");
		assertThat(resolver.resolve(new ServletRateLimitRequest(quotedIpv4))).isEqualTo("198.51.100.7");
		MockHttpServletRequest obfuscatedPort = request("10.0.0.1");
		obfuscatedPort.addHeader(FORWARDED, "for=\"[2001:db8:cafe::17]:_p1\"");
		assertThat(resolver.resolve(new ServletRateLimitRequest(obfuscatedPort))).isEqualTo("2001:db8:cafe::17");
	}

	@Test
	void readsForwardedParameterNamesCaseInsensitively() {
		MockHttpServletRequest request = request("10.0.0.1");
		request.addHeader(FORWARDED, "For=198.51.100.7, proto=https;FOR=10.0.0.2 ; by=10.0.0.1");
		assertThat(this.resolver.resolve(new ServletRateLimitRequest(request))).isEqualTo("198.51.100.7");
	}

	@Test
	void readsSeveralForwardedLinesAsOneListInOrder() {
		MockHttpServletRequest request = request("10.0.0.1");
		request.addHeader(FORWARDED, "for=6.6.6.6, for=198.51.100.7");
		request.addHeader(FORWARDED, "for=10.0.0.2;proto=https");
		assertThat(this.resolver.resolve(new ServletRateLimitRequest(request))).isEqualTo("198.51.100.7");
	}

	@Test
	void prefersForwardedOverXForwardedFor() {
		MockHttpServletRequest request = request("10.0.0.1");
		request.addHeader(FORWARDED, "for=198.51.100.7");
		request.addHeader(XFF, "198.51.100.8");
		assertThat(this.resolver.resolve(new ServletRateLimitRequest(request))).isEqualTo("198.51.100.7");
	}

	@ParameterizedTest
	@ValueSource(strings = { "for=unknown", "for=_hidden", "for=\"_gazonk\"", "proto=https", "for=", "for=\"\"",
			"for=\"", "for=198.51.100.9;for=198.51.100.8", "for=evil.example.com", "for=\"[fe80::1%25eth0]\"",
			"for=[2001:db8::1", "=" })
	void stopsAtForwardedElementWithoutUsableFor(String element) {
		MockHttpServletRequest request = request("10.0.0.1");
		request.addHeader(FORWARDED, "for=198.51.100.7, " + element + ", for=10.0.0.2");
		assertThat(this.resolver.resolve(new ServletRateLimitRequest(request))).isEqualTo("10.0.0.2");
	}

	static Stream<String> garbageForwardedHeaders() {
		return Stream.of("x".repeat(10_240), "for=" + "1".repeat(10_240), ";".repeat(10_240), "=".repeat(10_240),
				"\"".repeat(10_240), "for=\"" + "[".repeat(10_240), "for=\"198.51.100.7, 198.51.100.8\"",
				"for=\"\\\"198.51.100.7\\\"\"", "for=198.51.100.7\u0000", "for=\uff11\uff19\uff18.51.100.7",
				"for=[::1]]", "for=[[::1]", "for=\"[::1]:443:80\"", "for=::ffff:", "for=1.2.3.4/8", "for=-1.2.3.4",
				"for=" + "1.".repeat(5_000) + "1", "for=\"[" + "0:".repeat(3_000) + "]\"");
	}

	@ParameterizedTest
	@MethodSource("garbageForwardedHeaders")
	void garbageForwardedFromTrustedProxyMakesTheProxyTheClient(String garbage) {
		MockHttpServletRequest request = request("10.0.0.1");
		request.addHeader(FORWARDED, garbage);
		request.addHeader(XFF, "198.51.100.9");
		// Forwarded wins over X-Forwarded-For even when it is garbage: the walk stops at once
		assertThat(this.resolver.resolve(new ServletRateLimitRequest(request))).isEqualTo("10.0.0.1");
	}

	@Test
	void hundredsOfForwardedLinesFromTrustedProxiesAreExaminedOnlyInPart() {
		MockHttpServletRequest request = request("10.0.0.1");
		request.addHeader(FORWARDED, "for=198.51.100.7");
		for (int i = 0; i < 500; i++) {
			request.addHeader(FORWARDED, "for=10.0." + (i / 250) + "." + (i % 250));
		}
		// the 32 rightmost entries are all trusted: the leftmost of them is the client
		assertThat(this.resolver.resolve(new ServletRateLimitRequest(request))).isEqualTo("10.0.1.218");
	}

	@Test
	void aggregatesIpv6ClientsToTheirSlash64() {
		String first = this.resolver.resolve(new ServletRateLimitRequest(request("2001:db8:1:2:aaaa::1")));
		String second = this.resolver.resolve(new ServletRateLimitRequest(request("2001:db8:1:2:bbbb:cccc:dddd:eeee")));
		String neighbour = this.resolver.resolve(new ServletRateLimitRequest(request("2001:db8:1:3::1")));
		assertThat(first).isEqualTo("2001:db8:1:2::/64").isEqualTo(second);
		assertThat(neighbour).isEqualTo("2001:db8:1:3::/64");
	}

	@Test
	void aggregatesIpv6ToConfiguredPrefix() {
		ClientIpResolver perSite = new ClientIpResolver(List.of(), 48);
		assertThat(perSite.resolve(new ServletRateLimitRequest(request("2001:db8:1:2::1")))).isEqualTo("2001:db8:1::/48");
		assertThat(perSite.resolve(new ServletRateLimitRequest(request("2001:db8:1:ffff::1")))).isEqualTo("2001:db8:1::/48");
		assertThat(perSite.resolve(new ServletRateLimitRequest(request("2001:db8:2::1")))).isEqualTo("2001:db8:2::/48");
		ClientIpResolver perAddress = new ClientIpResolver(List.of(), 128);
		assertThat(perAddress.resolve(new ServletRateLimitRequest(request("2001:0DB8:0:0:0:0:0:0001")))).isEqualTo("2001:db8::1");
		assertThat(perAddress.resolve(new ServletRateLimitRequest(request("2001:db8::2")))).isEqualTo("2001:db8::2");
	}

	@Test
	void aggregatesIpv6ClientFoundBehindProxy() {
		MockHttpServletRequest request = request("fd00::1");
		request.addHeader(FORWARDED, "for=\"[2001:db8:1:2::99]\", for=\"[fd00::2]\"");
		assertThat(this.resolver.resolve(new ServletRateLimitRequest(request))).isEqualTo("2001:db8:1:2::/64");
	}

	@Test
	void treatsIpv4MappedIpv6AsIpv4() {
		assertThat(this.resolver.resolve(new ServletRateLimitRequest(request("::ffff:198.51.100.7")))).isEqualTo("198.51.100.7");
		assertThat(this.resolver.resolve(new ServletRateLimitRequest(request("0:0:0:0:0:ffff:c633:6407")))).isEqualTo("198.51.100.7");
		MockHttpServletRequest mappedProxy = request("::ffff:10.0.0.1");
		mappedProxy.addHeader(XFF, "198.51.100.7, ::ffff:10.0.0.2");
		assertThat(this.resolver.resolve(new ServletRateLimitRequest(mappedProxy))).isEqualTo("198.51.100.7");
	}

	@Test
	void normalisesContainerFormsOfRemoteAddress() {
		assertThat(this.resolver.resolve(new ServletRateLimitRequest(request("[2001:db8:1:2::1]")))).isEqualTo("2001:db8:1:2::/64");
		assertThat(this.resolver.resolve(new ServletRateLimitRequest(request("fe80::1%eth0")))).isEqualTo("fe80::/64");
		assertThat(this.resolver.resolve(new ServletRateLimitRequest(request("0:0:0:0:0:0:0:1")))).isEqualTo("::/64");
		// a dotted quad stands for itself once its brackets are off
		assertThat(this.resolver.resolve(new ServletRateLimitRequest(request("[198.51.100.7]")))).isEqualTo("198.51.100.7");
		assertThat(this.resolver.resolve(new ServletRateLimitRequest(request("198.51.100.7")))).isEqualTo("198.51.100.7");
	}

	@Test
	void sanitisesUnparsableRemoteAddress() {
		assertThat(this.resolver.resolve(new ServletRateLimitRequest(request(null)))).isEqualTo("unknown");
		assertThat(this.resolver.resolve(new ServletRateLimitRequest(request("")))).isEqualTo("unknown");
		assertThat(this.resolver.resolve(new ServletRateLimitRequest(request("<script>|$")))).isEqualTo("c");
		assertThat(this.resolver.resolve(new ServletRateLimitRequest(request("1.2.3.4|key:injection")))).isEqualTo("1.2.3.4e:ec");
		assertThat(this.resolver.resolve(new ServletRateLimitRequest(request("1".repeat(1_000))))).isEqualTo("1".repeat(45));
	}

	@Test
	void rejectsIpv6PrefixLengthOutOfRange() {
		assertThatIllegalArgumentException().isThrownBy(() -> new ClientIpResolver(List.of(), 0))
			.withMessageContaining("ipv6PrefixLength must be between 1 and 128")
			.withMessageEndingWith(": 0");
		assertThatIllegalArgumentException().isThrownBy(() -> new ClientIpResolver(List.of(), 129))
			.withMessageEndingWith(": 129");
		assertThatNullPointerException().isThrownBy(() -> new ClientIpResolver(null, 64));
	}

	private static MockHttpServletRequest request(String remoteAddr) {
		MockHttpServletRequest request = new MockHttpServletRequest();
		request.setRemoteAddr(remoteAddr);
		return request;
	}

	private static String randomText(Random random, String alphabet) {
		int length = random.nextInt(80);
		StringBuilder text = new StringBuilder(length);
		for (int i = 0; i < length; i++) {
			text.append(alphabet.charAt(random.nextInt(alphabet.length())));
		}
		return text.toString();
	}

}
