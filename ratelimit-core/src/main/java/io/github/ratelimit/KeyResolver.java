package io.github.ratelimit;

import org.jspecify.annotations.Nullable;

/**
 * Finds the identity whose bucket a request draws from, before a limit's own key sources
 * ({@code key} of {@code @RateLimited}, {@code ratelimit.default-key}) are asked. Declare
 * beans of this type to key limits on something the built-in sources do not know, such
 * as an API key or a device id; several are asked in their {@code @Order}, and the first
 * identity found wins.
 * <p>
 * Called on the thread handling the request (on WebFlux, an event loop) for every
 * limited request: answer from the request or from memory, never block. A value taken
 * from something the client writes lets clients choose their bucket, so only use what a
 * gateway or your authentication has vouched for. The value is bounded and hashed when it
 * contains characters unsafe in a key, so it cannot reach another identity's bucket.
 */
@FunctionalInterface
public interface KeyResolver {

	/**
	 * The identity of a request for one limit.
	 * @param request the request
	 * @param limit the name of the limit being keyed
	 * @return the identity, or {@code null} to leave it to the next resolver and finally
	 * to the limit's key sources
	 */
	@Nullable String resolve(RateLimitRequest request, String limit);

}
