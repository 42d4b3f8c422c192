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

	/** Slots of the table of client address identities; a power of two. */
	static final int IP_IDENTITY_SLOTS = 1024;

	private final ClientIpResolver clientIps;

	/**
	 * The identity last made for a client address, in the slot of the address's hash: a
	 * client's next request finds its identity here instead of making it again. The address
	 * is the peer's as the container reports it when no proxy is trusted (one resolver
	 * has one mode, so the two never share a table), else the resolved one. Bounded by
	 * its slots (another address of the same slot replaces it), and racy on purpose: a slot
	 * holds an immutable pair, checked against the address before it is used.
	 */
	private final IpIdentity[] ipIdentities = new IpIdentity[IP_IDENTITY_SLOTS];

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
		// indexed: an iterator is an allocation on every request
		for (int i = 0; i < keyChain.size(); i++) {
			String identity = switch (keyChain.get(i)) {
				case PRINCIPAL -> principal(request);
				case TENANT -> tenant(request);
				case IP -> ipIdentity(request);
				case GLOBAL -> Identities.GLOBAL;
			};
			if (identity != null) {
				return identity;
			}
		}
		return ipIdentity(request);
	}

	/**
	 * The identity of a request's client address. With no proxy trusted, the address
	 * resolved depends on the peer address alone, so the table is looked up by the peer
	 * address as the container reports it, before anything is parsed; otherwise by the
	 * address resolved from the forwarding headers.
	 */
	private String ipIdentity(RateLimitRequest request) {
		if (this.clientIps.trustsNoProxy()) {
			String peer = request.remoteAddress();
			if (peer != null) {
				IpIdentity kept = this.ipIdentities[slot(peer)];
				if (kept != null && (kept.address() == peer || kept.address().equals(peer))) {
					return kept.identity();
				}
				String identity = Identities.ip(this.clientIps.resolve(request));
				this.ipIdentities[slot(peer)] = new IpIdentity(peer, identity);
				return identity;
			}
		}
		return ipIdentity(this.clientIps.resolve(request));
	}

	private static int slot(String address) {
		int hash = address.hashCode();
		return (hash ^ (hash >>> 16)) & (IP_IDENTITY_SLOTS - 1);
	}

	/**
	 * The identity of a client address, from the table when its slot holds that address;
	 * otherwise made and put there. The address is the same string as last time for a
	 * connection kept alive, compared by reference first.
	 */
	String ipIdentity(String address) {
		int slot = slot(address);
		IpIdentity kept = this.ipIdentities[slot];
		if (kept != null && (kept.address() == address || kept.address().equals(address))) {
			return kept.identity();
		}
		String identity = Identities.ip(address);
		this.ipIdentities[slot] = new IpIdentity(address, identity);
		return identity;
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

	/** A client address and its identity. */
	private record IpIdentity(String address, String identity) {
	}

}
