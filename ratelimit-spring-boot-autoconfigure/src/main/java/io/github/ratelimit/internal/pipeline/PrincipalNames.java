package io.github.ratelimit.internal.pipeline;

import java.security.Principal;

import org.springframework.security.authentication.AnonymousAuthenticationToken;
import org.springframework.security.core.Authentication;
import org.springframework.security.core.context.SecurityContextHolder;
import org.springframework.util.ClassUtils;

/**
 * Finds the authenticated principal and its name. Anonymous users (Spring Security's
 * anonymous authentication, or an authentication that is not authenticated) have no
 * principal. Works with and without Spring Security on the classpath.
 */
public final class PrincipalNames {

	private static final boolean SECURITY_PRESENT = ClassUtils.isPresent(
			"org.springframework.security.core.context.SecurityContextHolder", PrincipalNames.class.getClassLoader());

	private PrincipalNames() {
	}

	/**
	 * The principal authenticated on this thread: Spring Security's authentication when
	 * Spring Security is on the classpath and someone is authenticated, otherwise
	 * {@code fallback} unless it is anonymous.
	 * @param fallback the principal the web stack reports (the servlet request's), or
	 * {@code null}
	 * @return the principal, or {@code null} when nobody is authenticated
	 */
	public static Principal current(Principal fallback) {
		if (SECURITY_PRESENT) {
			Principal authenticated = SecurityPrincipal.authenticated(SecurityContextHolder.getContext().getAuthentication());
			if (authenticated != null) {
				return authenticated;
			}
		}
		return authenticated(fallback);
	}

	/**
	 * A principal unless it is anonymous or not authenticated.
	 * @param principal the principal, or {@code null}
	 * @return the principal, or {@code null} when it does not count as authenticated
	 */
	public static Principal authenticated(Principal principal) {
		if (principal == null) {
			return null;
		}
		return SECURITY_PRESENT ? SecurityPrincipal.authenticated(principal) : principal;
	}

	/**
	 * The name of an authenticated principal.
	 * @param principal the principal, or {@code null}
	 * @return its name, or {@code null} when it is anonymous or has no name
	 */
	public static String name(Principal principal) {
		Principal authenticated = authenticated(principal);
		if (authenticated == null) {
			return null;
		}
		String name = authenticated.getName();
		return (name != null && !name.isEmpty()) ? name : null;
	}

	private static final class SecurityPrincipal {

		static Principal authenticated(Principal principal) {
			if (principal instanceof AnonymousAuthenticationToken) {
				return null;
			}
			if (principal instanceof Authentication authentication && !authentication.isAuthenticated()) {
				return null;
			}
			return principal;
		}

	}

}
