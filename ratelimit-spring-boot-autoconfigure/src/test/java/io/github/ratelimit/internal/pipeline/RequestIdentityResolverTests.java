package io.github.ratelimit.internal.pipeline;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

import org.springframework.mock.web.MockHttpServletRequest;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.KeyResolver;
import io.github.ratelimit.KeySource;
import io.github.ratelimit.internal.core.Identities;
import io.github.ratelimit.internal.memory.InMemoryRateLimitStore;
import io.github.ratelimit.internal.web.ServletRateLimitRequest;
import io.github.ratelimit.store.Acquisition;
import io.github.ratelimit.store.RateLimit;
import io.github.ratelimit.store.contract.MutableClock;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Hostile tenant headers: values that are not tenant ids are ignored in favour of the next
 * key source, values that are never reach a key raw, and a new value on every request
 * cannot grow the store beyond its bound.
 */
class RequestIdentityResolverTests {

	private static final String HEADER = "X-Tenant-Id";

	private static final String CLIENT = "203.0.113.9";

	private static final List<KeySource> TENANT_THEN_IP = List.of(KeySource.TENANT, KeySource.IP);

	private final RequestIdentityResolver resolver = new RequestIdentityResolver(
			new ClientIpResolver(List.of(), 64), HEADER, Pattern.compile("[A-Za-z0-9._:-]{1,64}"), List.of());

	static Stream<String> notTenantIds() {
		return Stream.of("acme corp", " acme", "acme\t", "ac\u0000me", "acme\r\nX-Evil: 1", "\u0007", "\u007f",
				"acme}", "{acme}", "{acme", "a}b{c", "acme/admin", "../acme", "acme%7B", "\u00e9lodie", "", "  ",
				"acme,globex", "acme;x=1", "*", "x".repeat(65));
	}

	@ParameterizedTest
	@MethodSource("notTenantIds")
	void tenantValueThatIsNotATenantIdFallsBackToTheNextKeySource(String tenant) {
		assertThat(this.resolver.resolve("limit", TENANT_THEN_IP, new ServletRateLimitRequest(request(tenant)))).isEqualTo("ip:" + CLIENT);
		MockHttpServletRequest signedIn = request(tenant);
		signedIn.setUserPrincipal(() -> "alice");
		assertThat(this.resolver.resolve("limit", List.of(KeySource.TENANT, KeySource.PRINCIPAL, KeySource.IP), new ServletRateLimitRequest(signedIn)))
			.isEqualTo("user:alice");
	}

	@Test
	void tenKilobyteTenantFallsBackToTheNextKeySource() {
		assertThat(this.resolver.resolve("limit", TENANT_THEN_IP, new ServletRateLimitRequest(request("a".repeat(10_240))))).isEqualTo("ip:" + CLIENT);
		assertThat(this.resolver.resolve("limit", TENANT_THEN_IP, new ServletRateLimitRequest(request("{".repeat(10_240))))).isEqualTo("ip:" + CLIENT);
	}

	@Test
	void tenantOnlyLimitFallsBackToTheClientIp() {
		assertThat(this.resolver.resolve("limit", List.of(KeySource.TENANT), new ServletRateLimitRequest(request("{evil}")))).isEqualTo("ip:" + CLIENT);
		assertThat(this.resolver.resolve("limit", List.of(KeySource.TENANT), new ServletRateLimitRequest(request(null)))).isEqualTo("ip:" + CLIENT);
	}

	@Test
	void tenantIdWithASeparatorAllowedByThePatternNeverReachesTheKeyRaw() {
		String identity = this.resolver.resolve("limit", TENANT_THEN_IP, new ServletRateLimitRequest(request("acme:admin")));
		assertThat(identity).startsWith("tenant:~").doesNotContain("acme", "admin");
		assertThat(identity).isNotEqualTo(this.resolver.resolve("limit", TENANT_THEN_IP, new ServletRateLimitRequest(request("acme"))))
			.isNotEqualTo(this.resolver.resolve("limit", TENANT_THEN_IP, new ServletRateLimitRequest(request("acme_admin"))))
			.isNotEqualTo(this.resolver.resolve("limit", TENANT_THEN_IP, new ServletRateLimitRequest(request("acme:admin:"))));
		assertThat(this.resolver.resolve("limit", TENANT_THEN_IP, new ServletRateLimitRequest(request("acme")))).isEqualTo("tenant:acme");
	}

	@ParameterizedTest
	@ValueSource(strings = { "{evil}", "a}b{c", "acme corp", "ac\u0000me", "acme\r\nX-Evil: 1", "tenant:acme",
			"user:alice", "ip:203.0.113.9" })
	void patternAdmittingAnythingStillYieldsSafeIdentities(String value) {
		RequestIdentityResolver permissive = new RequestIdentityResolver(new ClientIpResolver(List.of(), 64), HEADER,
				Pattern.compile("(?s).*"), List.of());
		String identity = permissive.resolve("limit", TENANT_THEN_IP, new ServletRateLimitRequest(request(value)));
		assertThat(identity).matches("tenant:~[A-Za-z0-9_-]{27}")
			.isNotEqualTo("tenant:acme")
			.isNotEqualTo("user:alice")
			.isNotEqualTo("ip:" + CLIENT);
	}

	@Test
	void patternAdmittingAnythingStillIgnoresValuesOverTwoHundredFiftySixCharacters() {
		RequestIdentityResolver permissive = new RequestIdentityResolver(new ClientIpResolver(List.of(), 64), HEADER,
				Pattern.compile("(?s).*"), List.of());
		assertThat(permissive.resolve("limit", TENANT_THEN_IP, new ServletRateLimitRequest(request("a".repeat(256))))).startsWith("tenant:~");
		assertThat(permissive.resolve("limit", TENANT_THEN_IP, new ServletRateLimitRequest(request("a".repeat(257))))).isEqualTo("ip:" + CLIENT);
		assertThat(permissive.resolve("limit", TENANT_THEN_IP, new ServletRateLimitRequest(request("a".repeat(10_240))))).isEqualTo("ip:" + CLIENT);
	}

	@Test
	void newTenantOnEveryRequestKeepsTheStoreWithinItsBound() {
		InMemoryRateLimitStore store = new InMemoryRateLimitStore(new MutableClock(), 500);
		RateLimit limit = RateLimit.of("reports", Algorithm.TOKEN_BUCKET, 10, Duration.ofHours(1));
		Random random = new Random(20_000);
		for (int i = 0; i < 20_000; i++) {
			String tenant = Long.toString(random.nextLong() & Long.MAX_VALUE, 36) + "-" + i;
			String identity = this.resolver.resolve("limit", TENANT_THEN_IP, new ServletRateLimitRequest(request(tenant)));
			assertThat(identity).isEqualTo("tenant:" + tenant);
			assertThat(store.tryAcquire(List.of(new Acquisition(limit, identity, 1))).allowed()).isTrue();
			if (i % 1_000 == 999) {
				assertThat(store.size()).isLessThanOrEqualTo(500);
			}
		}
		assertThat(store.size()).isBetween(1L, 500L);
	}

	@Test
	void keyResolversAreAskedInOrderBeforeTheKeyChain() {
		List<String> asked = new ArrayList<>();
		KeyResolver declines = (request, limit) -> {
			asked.add("declines:" + limit);
			return null;
		};
		KeyResolver apiKey = (request, limit) -> {
			asked.add("apiKey:" + limit);
			return request.header("X-Api-Key");
		};
		RequestIdentityResolver withResolvers = new RequestIdentityResolver(new ClientIpResolver(List.of(), 64),
				HEADER, Pattern.compile("[a-z]+"), List.of(declines, apiKey));
		MockHttpServletRequest request = request("acme");
		request.addHeader("X-Api-Key", "k-123");
		assertThat(withResolvers.resolve("search", TENANT_THEN_IP, new ServletRateLimitRequest(request)))
			.isEqualTo("key:k-123");
		assertThat(asked).containsExactly("declines:search", "apiKey:search");
		// no API key: both back off and the key chain decides
		assertThat(withResolvers.resolve("search", TENANT_THEN_IP, new ServletRateLimitRequest(request("acme"))))
			.isEqualTo("tenant:acme");
	}

	@Test
	void keyResolverValuesCannotForgeAnotherIdentity() {
		KeyResolver hostile = (request, limit) -> request.header("X-Api-Key");
		RequestIdentityResolver withResolver = new RequestIdentityResolver(new ClientIpResolver(List.of(), 64), HEADER,
				Pattern.compile("[a-z]+"), List.of(hostile));
		MockHttpServletRequest request = request(null);
		request.addHeader("X-Api-Key", "x}:user:alice");
		assertThat(withResolver.resolve("search", TENANT_THEN_IP, new ServletRateLimitRequest(request)))
			.matches("key:~[A-Za-z0-9_-]{27}");
	}

	private static MockHttpServletRequest request(String tenant) {
		MockHttpServletRequest request = new MockHttpServletRequest();
		request.setRemoteAddr(CLIENT);
		if (tenant != null) {
			request.addHeader(HEADER, tenant);
		}
		return request;
	}


	@Test
	void aClientsIdentityIsKeptInItsSlotAndAnotherAddressOfTheSlotReplacesIt() {
		RequestIdentityResolver resolver = new RequestIdentityResolver(new ClientIpResolver(List.of(), 64),
				"X-Tenant-Id", Pattern.compile("[A-Za-z0-9-]{1,64}"), List.of());
		String first = resolver.ipIdentity("203.0.113.7");

		assertThat(first).isEqualTo("ip:203.0.113.7");
		assertThat(resolver.ipIdentity(new String("203.0.113.7"))).isSameAs(first);
		// every other address, whatever its slot, gets its own identity
		for (int i = 0; i < 3 * RequestIdentityResolver.IP_IDENTITY_SLOTS; i++) {
			String address = "198.51." + (i / 256) + "." + (i % 256);
			assertThat(resolver.ipIdentity(address)).isEqualTo("ip:" + address);
		}
		assertThat(resolver.ipIdentity("203.0.113.7")).isEqualTo("ip:203.0.113.7");
		// an address the identity hashes is never taken for the hash it was kept as
		String odd = "2001:db8::1%eth0/unsafe!";
		String hashed = resolver.ipIdentity(odd);
		assertThat(hashed).startsWith("ip:~").isEqualTo(Identities.ip(odd));
		assertThat(resolver.ipIdentity(odd)).isEqualTo(hashed);
	}


	@Test
	void aPeerFoundInTheTableHasTheIdentityItsAddressResolvesTo() {
		ClientIpResolver clientIps = new ClientIpResolver(List.of(), 64);
		RequestIdentityResolver resolver = new RequestIdentityResolver(clientIps, "X-Tenant-Id",
				Pattern.compile("[A-Za-z0-9-]{1,64}"), List.of());
		for (String peer : List.of("203.0.113.7", "[2001:db8:1:2::9]", "2001:db8:1:2::10", "fe80::1%eth0",
				"::ffff:198.51.100.4", "not an address", "010.1.1.1", "203.0.113.7")) {
			MockHttpServletRequest servlet = new MockHttpServletRequest();
			servlet.setRemoteAddr(peer);
			// a client cannot move its bucket with a header no proxy vouches for
			servlet.addHeader("X-Forwarded-For", "192.0.2.1");
			ServletRateLimitRequest request = new ServletRateLimitRequest(servlet);
			String expected = Identities.ip(clientIps.resolve(request));
			for (int i = 0; i < 2; i++) {
				assertThat(resolver.resolve("l", List.of(KeySource.IP), request)).as(peer).isEqualTo(expected);
			}
		}
	}

}
