package io.github.ratelimit.internal.core;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.function.Function;
import java.util.regex.Pattern;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Hostile principal names, tenant ids and key values: whatever a client or an identity
 * provider puts in them, they cannot inject key separators or hash tags, grow keys without
 * bound, or land in another identity's bucket.
 */
class IdentitiesTest {

	/** Longest identity: the longest type prefix and 64 readable characters. */
	private static final int MAX_IDENTITY_LENGTH = "tenant:".length() + 64;

	private static final List<String> HOSTILE = List.of("alice:admin", "alice_admin", "aliceadmin", "alice",
			"{bob}", "bob", "bob}", "{bob", "a}b{c", "a_b_c", "abc", "a}b{c ", " a}b{c", "user:alice", "tenant:acme",
			"ip:127.0.0.1", "global", "alice/admin", "alice admin", "alice\u0000admin", "alice\r\nadmin",
			"alice\tadmin", "ALICE", "\u00e9lodie", "e\u0301lodie", "", " ", "{", "}", "}{", ":", "%7B", "%7Bbob%7D",
			"x%7D%7Bevil", "x}{evil", "a".repeat(64), "a".repeat(65), "a".repeat(10_240),
			"a".repeat(64) + "1", "a".repeat(64) + "2", "a".repeat(64) + "}", "a".repeat(100) + "x",
			"a".repeat(100) + "y");

	@Test
	void safeValuesAreExactlyThoseTheDocumentedPatternsAccept() {
		Pattern safe = Pattern.compile("[A-Za-z0-9._@+=-]{1,64}");
		Pattern safeIp = Pattern.compile("[0-9A-Fa-f.:/]{1,49}");
		String alphabet = "azAZgGfF09._@+=-:/~ {}\u00e9\u0000\n";
		Random random = new Random(42);
		for (int i = 0; i < 20_000; i++) {
			int length = random.nextInt(70);
			StringBuilder value = new StringBuilder(length);
			for (int c = 0; c < length; c++) {
				value.append(alphabet.charAt(random.nextInt(alphabet.length())));
			}
			String text = value.toString();
			assertThat(Identities.isSafe(text, false)).as("'%s'", text).isEqualTo(safe.matcher(text).matches());
			assertThat(Identities.isSafe(text, true)).as("ip '%s'", text).isEqualTo(safeIp.matcher(text).matches());
		}
		assertThat(Identities.isSafe("a".repeat(64), false)).isTrue();
		assertThat(Identities.isSafe("a".repeat(65), false)).isFalse();
		assertThat(Identities.isSafe("f".repeat(49), true)).isTrue();
		assertThat(Identities.isSafe("f".repeat(50), true)).isFalse();
	}

	@Test
	void parseKeepsIdentitiesAsTheLimiterFormsThem() {
		for (String identity : List.of(Identities.principal("alice"), Identities.principal("Jane Doe"),
				Identities.tenant("acme"), Identities.tenant("{evil}"), Identities.ip("203.0.113.7"),
				Identities.ip("2001:db8:1:2::/64"), Identities.expression("x".repeat(100)), Identities.GLOBAL)) {
			assertThat(Identities.parse(identity)).isEqualTo(identity);
		}
	}

	@Test
	void parseHashesARawValueTheWayTheLimiterWould() {
		assertThat(Identities.parse("user:Jane Doe")).isEqualTo(Identities.principal("Jane Doe"))
			.startsWith("user:~");
		assertThat(Identities.parse("tenant:a}b{c")).isEqualTo(Identities.tenant("a}b{c"));
		assertThat(Identities.parse("key:" + "y".repeat(65))).isEqualTo(Identities.expression("y".repeat(65)));
		assertThat(Identities.parse("something-else")).isEqualTo("something-else");
	}

	@Test
	void keepsShortSafeValuesReadable() {
		assertThat(Identities.principal("alice")).isEqualTo("user:alice");
		assertThat(Identities.principal("alice@example.com")).isEqualTo("user:alice@example.com");
		assertThat(Identities.tenant("acme-1.eu")).isEqualTo("tenant:acme-1.eu");
		assertThat(Identities.ip("2001:db8::/64")).isEqualTo("ip:2001:db8::/64");
	}

	@Test
	void distinctPrincipalNamesHaveDistinctIdentities() {
		assertDistinct(HOSTILE, Identities::principal);
	}

	@Test
	void distinctTenantIdsHaveDistinctIdentities() {
		assertDistinct(HOSTILE, Identities::tenant);
	}

	@Test
	void distinctKeyValuesHaveDistinctIdentities() {
		assertDistinct(HOSTILE, Identities::expression);
	}

	@Test
	void distinctRandomHostileNamesHaveDistinctIdentities() {
		Random random = new Random(4);
		String alphabet = "ab:{}/ %~_-.@+=\u0000\n\u00e9";
		List<String> names = new ArrayList<>();
		for (int i = 0; i < 20_000; i++) {
			StringBuilder name = new StringBuilder();
			int length = 1 + random.nextInt(80);
			for (int j = 0; j < length; j++) {
				name.append(alphabet.charAt(random.nextInt(alphabet.length())));
			}
			names.add(name.toString());
		}
		assertDistinct(names.stream().distinct().toList(), Identities::principal);
	}

	@ParameterizedTest
	@ValueSource(strings = { "alice:admin", "{bob}", "a}b{c", "x}{evil", "alice admin", "alice/admin",
			"alice\u0000admin", "alice\r\nadmin", "user:alice", "~abc" })
	void unsafeValuesAreReplacedByAHashThatNeverContainsTheRawValue(String name) {
		for (String identity : List.of(Identities.principal(name), Identities.tenant(name),
				Identities.expression(name))) {
			assertThat(identity).matches("(user|tenant|key):~[A-Za-z0-9_-]{27}").doesNotContain(name);
		}
	}

	@Test
	void namesDifferingOnlyAfterSixtyFourCharactersDoNotShareABucket() {
		String prefix = "a".repeat(64);
		assertThat(Identities.principal(prefix + "1")).isNotEqualTo(Identities.principal(prefix + "2"))
			.isNotEqualTo(Identities.principal(prefix));
		String longPrefix = "b".repeat(1_000);
		assertThat(Identities.principal(longPrefix + "1")).isNotEqualTo(Identities.principal(longPrefix + "2"));
	}

	@Test
	void aNameSpelledLikeAnotherNamesHashCannotPoseAsIt() {
		String victim = Identities.principal("a}b{c");
		String hash = victim.substring("user:~".length());
		assertThat(Identities.principal(hash)).isNotEqualTo(victim);
		assertThat(Identities.principal("~" + hash)).isNotEqualTo(victim);
	}

	@Test
	void aNameSpelledLikeAnotherKindOfIdentityCannotPoseAsIt() {
		assertThat(Identities.principal("tenant:acme")).isNotEqualTo(Identities.tenant("acme"));
		assertThat(Identities.principal("global")).isNotEqualTo(Identities.GLOBAL);
		assertThat(Identities.tenant("127.0.0.1")).isNotEqualTo(Identities.ip("127.0.0.1"));
		assertThat(Identities.expression("alice")).isNotEqualTo(Identities.principal("alice"));
	}

	@Test
	void tenKilobyteValuesMakeShortIdentities() {
		String huge = "x{".repeat(5_120);
		assertThat(Identities.principal(huge)).hasSizeLessThanOrEqualTo(MAX_IDENTITY_LENGTH);
		assertThat(Identities.tenant(huge)).hasSizeLessThanOrEqualTo(MAX_IDENTITY_LENGTH);
		assertThat(Identities.ip(huge)).hasSizeLessThanOrEqualTo(MAX_IDENTITY_LENGTH);
	}

	@Test
	void clientAddressesThatAreNotAddressesAreHashed() {
		assertThat(Identities.ip("1.2.3.4}:x{")).matches("ip:~[A-Za-z0-9_-]{27}");
		assertThat(Identities.ip("f".repeat(50))).matches("ip:~[A-Za-z0-9_-]{27}");
	}

	private static void assertDistinct(List<String> values, Function<String, String> identity) {
		Map<String, String> seen = new HashMap<>();
		for (String value : values) {
			String result = identity.apply(value);
			assertThat(result).as(() -> "identity of " + printable(value))
				.doesNotContain("{", "}")
				.hasSizeLessThanOrEqualTo(MAX_IDENTITY_LENGTH)
				.matches("[A-Za-z0-9._@+=:~-]+");
			String previous = seen.put(result, value);
			assertThat(previous)
				.as(() -> printable(previous) + " and " + printable(value) + " share the identity " + result)
				.isNull();
		}
	}

	private static String printable(String value) {
		if (value == null) {
			return null;
		}
		StringBuilder escaped = new StringBuilder("'");
		for (int i = 0; i < Math.min(value.length(), 80); i++) {
			char c = value.charAt(i);
			escaped.append((c < 0x20 || c > 0x7e) ? String.format("\\u%04x", (int) c) : String.valueOf(c));
		}
		return escaped.append((value.length() > 80) ? "'… (" + value.length() + " chars)" : "'").toString();
	}

}
