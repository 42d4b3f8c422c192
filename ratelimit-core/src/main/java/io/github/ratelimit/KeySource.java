package io.github.ratelimit;

/**
 * Where the identity of a request comes from. In a key chain, the first source available
 * for the request wins.
 */
public enum KeySource {

	/** The authenticated principal's name; anonymous users have none. */
	PRINCIPAL,

	/** The tenant header, when it matches {@code ratelimit.tenant.pattern}. */
	TENANT,

	/** The client IP address, resolved through {@code ratelimit.client-ip.trusted-proxies}. */
	IP,

	/** One bucket shared by every caller. */
	GLOBAL

}
