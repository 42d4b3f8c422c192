package io.github.ratelimit;

import java.security.Principal;

import org.jspecify.annotations.Nullable;

/**
 * Finds the plan (tier) of a rate limited call, which picks the plan's values of a policy
 * configured under {@code ratelimit.policies.<name>.plans.<plan>}. The default reads the
 * authenticated principal's granted authorities ({@code PLAN_pro} means plan {@code pro});
 * declare a bean of this type to find plans elsewhere, such as in a subscription
 * database. Inside a web request, {@code RequestContextHolder} gives access to the
 * request, but a plan taken from something the client sends (a header) lets clients
 * choose their own limits.
 * <p>
 * Called only when a limit with plans applies, on the thread handling the call, so it
 * should answer from memory.
 */
@FunctionalInterface
public interface PlanResolver {

	/**
	 * The plan of the current call.
	 * @param principal the authenticated principal (with Spring Security, its
	 * {@code Authentication}), or {@code null} for anonymous calls
	 * @return the plan name (compared ignoring case), or {@code null} for the policy's
	 * own values; a plan the policy does not define also gets the policy's own values
	 */
	@Nullable String resolve(@Nullable Principal principal);

}
