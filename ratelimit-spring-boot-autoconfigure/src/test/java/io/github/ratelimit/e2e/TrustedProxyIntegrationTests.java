package io.github.ratelimit.e2e;

import java.time.Duration;
import java.util.List;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;

import static org.assertj.core.api.Assertions.assertThat;

@SpringBootTest(classes = E2eApplication.class, webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { "ratelimit.client-ip.trusted-proxies=127.0.0.0/8", "ratelimit.routes[0].path=/routed/**",
				"ratelimit.routes[0].capacity=2", "ratelimit.routes[0].period=1h", "ratelimit.routes[0].key=ip" })
class TrustedProxyIntegrationTests {

	@LocalServerPort
	int port;

	HttpTestClient http;

	@BeforeEach
	void freshBuckets() {
		E2eApplication.advance(Duration.ofDays(3650));
		this.http = new HttpTestClient(this.port);
	}

	@Test
	void clientBehindATrustedProxyIsTheRightmostUntrustedHop() {
		// a client forged the leftmost value; the trusted proxy appended the real address
		String forged = "203.0.113.66, 198.51.100.7";
		assertThat(this.http.get("/routed/1", "X-Forwarded-For", forged).statusCode()).isEqualTo(200);
		assertThat(this.http.get("/routed/1", "X-Forwarded-For", "10.9.9.9, 198.51.100.7").statusCode())
			.isEqualTo(200);
		assertThat(this.http.get("/routed/1", "X-Forwarded-For", "198.51.100.7").statusCode()).isEqualTo(429);
		assertThat(this.http.get("/routed/1", "X-Forwarded-For", "198.51.100.8").statusCode()).isEqualTo(200);
	}

	@Test
	void ipv6ClientsOfOneSubnetShareABucket() {
		assertThat(this.http.get("/routed/1", "Forwarded", "for=\"[2001:db8:1:2::1]:443\"").statusCode())
			.isEqualTo(200);
		assertThat(this.http.get("/routed/1", "Forwarded", "for=\"[2001:db8:1:2:ffff::9]\"").statusCode())
			.isEqualTo(200);
		assertThat(this.http.get("/routed/1", "Forwarded", "for=\"[2001:db8:1:2::77]\"").statusCode())
			.isEqualTo(429);
		assertThat(this.http.get("/routed/1", "Forwarded", "for=\"[2001:db8:1:3::1]\"").statusCode())
			.isEqualTo(200);
	}

	@Test
	void malformedForwardedFromATrustedProxyIsChargedToTheProxy() {
		List<String> malformed = List.of("for=", "for=\"", "for=\"\"", "for=unknown", "for=_hidden", "by=127.0.0.1",
				";;;", "=", ",,,", "for=\"[2001:db8::1\"", "for=[2001:db8::1]:99999", "for=\"198.51.100.7, 10.0.0.1\"",
				"for=198.51.100.7;for=198.51.100.8", "for=evil.example.com", "for=\"[fe80::1%25eth0]\"",
				"for=198.51.100.007", "for=0x7f.0.0.1", "for=198.51.100.7:80:90", "for=\u00e9", "for=" + "9".repeat(4_000),
				"for=198.51.100.7, ".repeat(300) + "for=garbage");
		for (String value : malformed) {
			E2eApplication.advance(Duration.ofDays(1));
			assertThat(this.http.get("/routed/3", "Forwarded", value).statusCode()).as(value).isEqualTo(200);
			assertThat(this.http.get("/routed/3", "Forwarded", value).statusCode()).as(value).isEqualTo(200);
			// the walk stopped at the malformed entry: the trusted peer itself was the client
			assertThat(this.http.get("/routed/3").statusCode()).as(value).isEqualTo(429);
		}
	}

	@Test
	void malformedForwardingHeadersFromATrustedProxyNeverFailTheRequest() {
		assertThat(this.http.get("/routed/2", "X-Forwarded-For", "not-an-ip, _hidden, 999.1.1.1, evil.example.com").statusCode())
			.isEqualTo(200);
		assertThat(this.http.get("/routed/2", "X-Forwarded-For", "1.2.3.4,".repeat(400)).statusCode()).isEqualTo(200);
	}

}
