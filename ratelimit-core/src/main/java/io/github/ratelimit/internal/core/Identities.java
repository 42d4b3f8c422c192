package io.github.ratelimit.internal.core;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Base64;
import java.util.regex.Pattern;

/**
 * Builds bucket identities from untrusted values. An identity is a fixed type prefix and a
 * value; values that are short and made of safe characters stay readable, anything else
 * (separators, braces, control characters, very long values) is replaced by a hash of
 * itself, so no value can forge another one's identity or inject separators into a key.
 */
public final class Identities {

	/** Identity of the bucket shared by every caller. */
	public static final String GLOBAL = "global";

	private static final Pattern SAFE = Pattern.compile("[A-Za-z0-9._@+=-]{1,64}");

	private static final Pattern SAFE_IP = Pattern.compile("[0-9A-Fa-f.:/]{1,49}");

	private static final Pattern HASHED = Pattern.compile("~[A-Za-z0-9_-]{27}");

	private Identities() {
	}

	/**
	 * Identity of an authenticated principal.
	 * @param name the principal name
	 * @return the identity
	 */
	public static String principal(String name) {
		return "user:" + safe(name, SAFE);
	}

	/**
	 * Identity of a tenant.
	 * @param tenant the tenant id
	 * @return the identity
	 */
	public static String tenant(String tenant) {
		return "tenant:" + safe(tenant, SAFE);
	}

	/**
	 * Identity of a client address.
	 * @param ip the normalised address (or IPv6 network)
	 * @return the identity
	 */
	public static String ip(String ip) {
		return "ip:" + safe(ip, SAFE_IP);
	}

	/**
	 * Identity computed by a key expression.
	 * @param value the expression value
	 * @return the identity
	 */
	public static String expression(String value) {
		return "key:" + safe(value, SAFE);
	}

	/**
	 * The identity an operator means by what they typed. An identity as the limiter forms
	 * it ({@code user:alice}, {@code ip:203.0.113.7}, {@code tenant:acme}, {@code key:x},
	 * {@code global}, or a hashed {@code user:~…}) is returned unchanged; a type prefix
	 * followed by a raw value the limiter would have hashed ({@code user:Jane Doe}) is
	 * hashed the same way, so operators can name a principal the way it signs in.
	 * @param typed the identity as typed
	 * @return the identity as the limiter forms it
	 */
	public static String parse(String typed) {
		int colon = typed.indexOf(':');
		if (colon < 0) {
			return typed;
		}
		String value = typed.substring(colon + 1);
		if (value.isEmpty() || HASHED.matcher(value).matches()) {
			return typed;
		}
		return switch (typed.substring(0, colon + 1)) {
			case "user:" -> principal(value);
			case "tenant:" -> tenant(value);
			case "ip:" -> ip(value);
			case "key:" -> expression(value);
			default -> typed;
		};
	}

	private static String safe(String value, Pattern safe) {
		if (isSafe(value, safe == SAFE_IP)) {
			return value;
		}
		return "~" + hash(value);
	}

	/**
	 * Whether a value matches {@link #SAFE} (or {@link #SAFE_IP}), checked character by
	 * character: it runs on every request, where a regular expression's matcher allocates.
	 */
	static boolean isSafe(String value, boolean ip) {
		int length = value.length();
		if (length == 0 || length > (ip ? 49 : 64)) {
			return false;
		}
		for (int i = 0; i < length; i++) {
			char c = value.charAt(i);
			boolean hex = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
			boolean allowed = ip ? (hex || c == '.' || c == ':' || c == '/')
					: (hex || (c >= 'g' && c <= 'z') || (c >= 'G' && c <= 'Z') || c == '.' || c == '_' || c == '@'
							|| c == '+' || c == '=' || c == '-');
			if (!allowed) {
				return false;
			}
		}
		return true;
	}

	private static String hash(String value) {
		try {
			byte[] digest = MessageDigest.getInstance("SHA-256").digest(value.getBytes(StandardCharsets.UTF_8));
			return Base64.getUrlEncoder().withoutPadding().encodeToString(digest).substring(0, 27);
		}
		catch (NoSuchAlgorithmException ex) {
			throw new IllegalStateException("SHA-256 is required by the Java platform", ex);
		}
	}

}
