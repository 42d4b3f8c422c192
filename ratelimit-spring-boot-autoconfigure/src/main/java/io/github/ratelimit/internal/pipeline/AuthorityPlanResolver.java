package io.github.ratelimit.internal.pipeline;

import java.security.Principal;

import org.springframework.security.core.Authentication;
import org.springframework.security.core.GrantedAuthority;
import org.springframework.util.ClassUtils;

import io.github.ratelimit.PlanResolver;

/**
 * The default {@link PlanResolver}: the plan is named by the first granted authority of
 * the Spring Security authentication that starts with a prefix ({@code PLAN_pro} means
 * plan {@code pro}). Without Spring Security, or without such an authority, there is no
 * plan.
 */
public final class AuthorityPlanResolver implements PlanResolver {

	private static final boolean SECURITY_PRESENT = ClassUtils.isPresent(
			"org.springframework.security.core.Authentication", AuthorityPlanResolver.class.getClassLoader());

	private final String prefix;

	/**
	 * Creates a resolver.
	 * @param prefix the prefix of authorities naming a plan, such as {@code PLAN_}
	 */
	public AuthorityPlanResolver(String prefix) {
		if (prefix == null || prefix.isEmpty()) {
			throw new IllegalArgumentException("prefix must not be empty");
		}
		this.prefix = prefix;
	}

	@Override
	public String resolve(Principal principal) {
		return SECURITY_PRESENT ? Authorities.plan(principal, this.prefix) : null;
	}

	private static final class Authorities {

		static String plan(Principal principal, String prefix) {
			if (!(principal instanceof Authentication authentication)) {
				return null;
			}
			for (GrantedAuthority granted : authentication.getAuthorities()) {
				String authority = granted.getAuthority();
				if (authority != null && authority.length() > prefix.length() && authority.startsWith(prefix)) {
					return authority.substring(prefix.length());
				}
			}
			return null;
		}

	}

}
