package io.github.ratelimit.web;

import java.time.Duration;
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
import io.github.ratelimit.KeySource;
import io.github.ratelimit.core.Acquisition;
import io.github.ratelimit.core.MutableClock;
import io.github.ratelimit.core.RateLimit;
import io.github.ratelimit.memory.InMemoryRateLimitStore;

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
			new ClientIpResolver(List.of(), 64), HEADER, Pattern.compile("[A-Za-z0-9._:-]{1,64}"));

	static Stream<String> notTenantIds() {
		return Stream.of("acme corp", " acme", "acme\t", "ac\u0000me", "acme\r\nX-Evil: 1", "\u0007", "\u007f",
				"acme}", "{acme}", "{acme", "a}b{c", "acme/admin", "../acme", "acme%7B", "\u00e9lodie", "", "  ",
				"acme,globex", "acme;x=1", "*", "x".repeat(65));
	}

	@ParameterizedTest
	@MethodSource("notTenantIds")
	void tenantValueThatIsNotATenantIdFallsBackToTheNextKeySource(String tenant) {
		assertThat(this.resolver.resolve(TENANT_THEN_IP, request(tenant))).isEqualTo("ip:" + CLIENT);
		MockHttpServletRequest signedIn = request(tenant);
		signedIn.setUserPrincipal(() -> "alice");
		assertThat(this.resolver.resolve(List.of(KeySource.TENANT, KeySource.PRINCIPAL, KeySource.IP), signedIn))
			.isEqualTo("user:alice");
	}

	@Test
	void tenKilobyteTenantFallsBackToTheNextKeySource() {
		assertThat(this.resolver.resolve(TENANT_THEN_IP, request("a".repeat(10_240)))).isEqualTo("ip:" + CLIENT);
		assertThat(this.resolver.resolve(TENANT_THEN_IP, request("{".repeat(10_240)))).isEqualTo("ip:" + CLIENT);
	}

	@Test
	void tenantOnlyLimitFallsBackToTheClientIp() {
		assertThat(this.resolver.resolve(List.of(KeySource.TENANT), request("{evil}"))).isEqualTo("ip:" + CLIENT);
		assertThat(this.resolver.resolve(List.of(KeySource.TENANT), request(null))).isEqualTo("ip:" + CLIENT);
	}

	@Test
	void tenantIdWithASeparatorAllowedByThePatternNeverReachesTheKeyRaw() {
		String identity = this.resolver.resolve(TENANT_THEN_IP, request("acme:admin"));
		assertThat(identity).startsWith("tenant:~").doesNotContain("acme", "admin");
		assertThat(identity).isNotEqualTo(this.resolver.resolve(TENANT_THEN_IP, request("acme")))
			.isNotEqualTo(this.resolver.resolve(TENANT_THEN_IP, request("acme_admin")))
			.isNotEqualTo(this.resolver.resolve(TENANT_THEN_IP, request("acme:admin:")));
		assertThat(this.resolver.resolve(TENANT_THEN_IP, request("acme"))).isEqualTo("tenant:acme");
	}

	@ParameterizedTest
	@ValueSource(strings = { "{evil}", "a}b{c", "acme corp", "ac\u0000me", "acme\r\nX-Evil: 1", "tenant:acme",
			"user:alice", "ip:203.0.113.9" })
	void patternAdmittingAnythingStillYieldsSafeIdentities(String value) {
		RequestIdentityResolver permissive = new RequestIdentityResolver(new ClientIpResolver(List.of(), 64), HEADER,
				Pattern.compile("(?s).*"));
		String identity = permissive.resolve(TENANT_THEN_IP, request(value));
		assertThat(identity).matches("tenant:~[A-Za-z0-9_-]{27}")
			.isNotEqualTo("tenant:acme")
			.isNotEqualTo("user:alice")
			.isNotEqualTo("ip:" + CLIENT);
	}

	@Test
	void patternAdmittingAnythingStillIgnoresValuesOverTwoHundredFiftySixCharacters() {
		RequestIdentityResolver permissive = new RequestIdentityResolver(new ClientIpResolver(List.of(), 64), HEADER,
				Pattern.compile("(?s).*"));
		assertThat(permissive.resolve(TENANT_THEN_IP, request("a".repeat(256)))).startsWith("tenant:~");
		assertThat(permissive.resolve(TENANT_THEN_IP, request("a".repeat(257)))).isEqualTo("ip:" + CLIENT);
		assertThat(permissive.resolve(TENANT_THEN_IP, request("a".repeat(10_240)))).isEqualTo("ip:" + CLIENT);
	}

	@Test
	void newTenantOnEveryRequestKeepsTheStoreWithinItsBound() {
		InMemoryRateLimitStore store = new InMemoryRateLimitStore(new MutableClock(), 500);
		RateLimit limit = RateLimit.of("reports", Algorithm.TOKEN_BUCKET, 10, Duration.ofHours(1));
		Random random = new Random(20_000);
		for (int i = 0; i < 20_000; i++) {
			String tenant = Long.toString(random.nextLong() & Long.MAX_VALUE, 36) + "-" + i;
			String identity = this.resolver.resolve(TENANT_THEN_IP, request(tenant));
			assertThat(identity).isEqualTo("tenant:" + tenant);
			assertThat(store.tryAcquire(List.of(new Acquisition(limit, identity, 1))).allowed()).isTrue();
			if (i % 1_000 == 999) {
				assertThat(store.size()).isLessThanOrEqualTo(500);
			}
		}
		assertThat(store.size()).isBetween(1L, 500L);
	}

	private static MockHttpServletRequest request(String tenant) {
		MockHttpServletRequest request = new MockHttpServletRequest();
		request.setRemoteAddr(CLIENT);
		if (tenant != null) {
			request.addHeader(HEADER, tenant);
		}
		return request;
	}

}
