package io.github.ratelimit.web;

import java.util.List;
import java.util.regex.Pattern;

import jakarta.servlet.http.HttpServletRequest;

import io.github.ratelimit.KeySource;
import io.github.ratelimit.aop.PrincipalNames;
import io.github.ratelimit.core.Identities;

/**
 * Finds the identity of a request for a key chain: the first source available wins. When
 * none is available (an anonymous request for a principal-only limit), the client IP is
 * used, so nobody escapes a limit and nobody shares a bucket with strangers.
 */
public final class RequestIdentityResolver {

	/** Longest tenant header value even looked at; longer values are ignored. */
	private static final int MAX_TENANT_LENGTH = 256;

	private final ClientIpResolver clientIps;

	private final String tenantHeader;

	private final Pattern tenantPattern;

	/**
	 * Creates a resolver.
	 * @param clientIps resolves client addresses
	 * @param tenantHeader the tenant header name
	 * @param tenantPattern the pattern a tenant id must match entirely
	 */
	public RequestIdentityResolver(ClientIpResolver clientIps, String tenantHeader, Pattern tenantPattern) {
		this.clientIps = clientIps;
		this.tenantHeader = tenantHeader;
		this.tenantPattern = tenantPattern;
	}

	/**
	 * The identity of a request.
	 * @param keyChain the key sources in order
	 * @param request the request
	 * @return the identity
	 */
	public String resolve(List<KeySource> keyChain, HttpServletRequest request) {
		for (KeySource source : keyChain) {
			String identity = switch (source) {
				case PRINCIPAL -> principal(request);
				case TENANT -> tenant(request);
				case IP -> Identities.ip(this.clientIps.resolve(request));
				case GLOBAL -> Identities.GLOBAL;
			};
			if (identity != null) {
				return identity;
			}
		}
		return Identities.ip(this.clientIps.resolve(request));
	}

	private static String principal(HttpServletRequest request) {
		String name = PrincipalNames.current(request.getUserPrincipal());
		return (name != null) ? Identities.principal(name) : null;
	}

	private String tenant(HttpServletRequest request) {
		String value = request.getHeader(this.tenantHeader);
		if (value == null || value.length() > MAX_TENANT_LENGTH || !this.tenantPattern.matcher(value).matches()) {
			return null;
		}
		return Identities.tenant(value);
	}

}
