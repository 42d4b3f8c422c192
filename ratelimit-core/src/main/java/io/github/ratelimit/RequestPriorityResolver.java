package io.github.ratelimit;

import org.jspecify.annotations.Nullable;

/**
 * Finds the priority of a request when the service is overloaded
 * ({@code ratelimit.overload.enabled=true}), before any other source is consulted.
 * Declare beans of this type to rank requests by something only the application knows,
 * such as a customer's plan; several are asked in order until one answers.
 * <p>
 * Called for every request the overload limit covers, on the thread that receives it (an
 * event loop on WebFlux), before Spring Security: it must answer from memory, and must not
 * trust what a client says about itself unless something in front of the service checked it.
 */
@FunctionalInterface
public interface RequestPriorityResolver {

	/**
	 * The priority of a request.
	 * @param request the request
	 * @return the priority, or {@code null} to let the next source decide (other resolvers,
	 * the priority header, configured routes, {@link OverloadPriority}, then the default)
	 */
	@Nullable RequestPriority resolve(RateLimitRequest request);

}
