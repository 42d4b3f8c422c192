package io.github.ratelimit.internal.pipeline;

import java.util.List;
import java.util.regex.Pattern;

import io.github.ratelimit.KeyResolver;
import io.github.ratelimit.KeySource;
import io.github.ratelimit.RateLimitRequest;
import io.github.ratelimit.internal.core.Identities;

/**
 * Finds the identity of a request for a limit: the application's {@link KeyResolver}s in
 * order, then the limit's key chain, where the first source available wins. When none is
 * available (an anonymous request for a principal-only limit), the client IP is used, so
 * nobody escapes a limit and nobody shares a bucket with strangers.
 */
public final class RequestIdentityResolver {

	/** Longest tenant header value even looked at; longer values are ignored. */
	private static final int MAX_TENANT_LENGTH = 256;

	private final ClientIpResolver clientIps;

	private final String tenantHeader;

	private final Pattern tenantPattern;

	private final List<KeyResolver> keyResolvers;

	/**
	 * Creates a resolver.
	 * @param clientIps resolves client addresses
	 * @param tenantHeader the tenant header name
	 * @param tenantPattern the pattern a tenant id must match entirely
	 * @param keyResolvers the application's key resolvers, asked in order before the key chain
	 */
	public RequestIdentityResolver(ClientIpResolver clientIps, String tenantHeader, Pattern tenantPattern,
			List<KeyResolver> keyResolvers) {
		this.clientIps = clientIps;
		this.tenantHeader = tenantHeader;
		this.tenantPattern = tenantPattern;
		this.keyResolvers = List.copyOf(keyResolvers);
	}

	/**
	 * The identity of a request for a limit.
	 * @param limit the limit name, given to key resolvers
	 * @param keyChain the key sources in order
	 * @param request the request
	 * @return the identity
	 */
	public String resolve(String limit, List<KeySource> keyChain, RateLimitRequest request) {
		for (int i = 0; i < this.keyResolvers.size(); i++) {
			String resolved = this.keyResolvers.get(i).resolve(request, limit);
			if (resolved != null && !resolved.isEmpty()) {
				return Identities.expression(resolved);
			}
		}
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

	private static String principal(RateLimitRequest request) {
		String name = PrincipalNames.name(request.principal());
		return (name != null) ? Identities.principal(name) : null;
	}

	private String tenant(RateLimitRequest request) {
		String value = request.header(this.tenantHeader);
		if (value == null || value.length() > MAX_TENANT_LENGTH || !this.tenantPattern.matcher(value).matches()) {
			return null;
		}
		return Identities.tenant(value);
	}

}
