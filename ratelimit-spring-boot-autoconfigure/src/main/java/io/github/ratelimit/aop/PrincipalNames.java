package io.github.ratelimit.aop;

import java.security.Principal;

import org.springframework.security.authentication.AnonymousAuthenticationToken;
import org.springframework.security.core.Authentication;
import org.springframework.security.core.context.SecurityContextHolder;
import org.springframework.util.ClassUtils;

/**
 * Finds the name of the authenticated principal: Spring Security's authentication when
 * Spring Security is on the classpath, otherwise the servlet principal. Anonymous users
 * have no principal.
 */
public final class PrincipalNames {

	private static final boolean SECURITY_PRESENT = ClassUtils.isPresent(
			"org.springframework.security.core.context.SecurityContextHolder", PrincipalNames.class.getClassLoader());

	private PrincipalNames() {
	}

	/**
	 * The current principal's name.
	 * @param servletPrincipal the principal of the current servlet request, or {@code null}
	 * @return the name, or {@code null} when nobody is authenticated
	 */
	public static String current(Principal servletPrincipal) {
		if (SECURITY_PRESENT) {
			String name = SecurityPrincipal.name();
			if (name != null) {
				return name;
			}
		}
		if (servletPrincipal == null || (SECURITY_PRESENT && SecurityPrincipal.isAnonymous(servletPrincipal))) {
			return null;
		}
		String name = servletPrincipal.getName();
		return (name != null && !name.isEmpty()) ? name : null;
	}

	/**
	 * The current principal itself: Spring Security's authentication when Spring Security
	 * is on the classpath and someone is authenticated, otherwise the servlet principal.
	 * @param servletPrincipal the principal of the current servlet request, or {@code null}
	 * @return the principal, or {@code null} when nobody is authenticated
	 */
	public static Principal currentPrincipal(Principal servletPrincipal) {
		if (SECURITY_PRESENT) {
			Principal authenticated = SecurityPrincipal.authenticated();
			if (authenticated != null) {
				return authenticated;
			}
		}
		if (servletPrincipal == null || (SECURITY_PRESENT && SecurityPrincipal.isAnonymous(servletPrincipal))) {
			return null;
		}
		return servletPrincipal;
	}

	private static final class SecurityPrincipal {

		static Principal authenticated() {
			Authentication authentication = SecurityContextHolder.getContext().getAuthentication();
			if (authentication == null || !authentication.isAuthenticated()
					|| authentication instanceof AnonymousAuthenticationToken) {
				return null;
			}
			return authentication;
		}

		static String name() {
			Principal authentication = authenticated();
			if (authentication == null) {
				return null;
			}
			String name = authentication.getName();
			return (name != null && !name.isEmpty()) ? name : null;
		}

		static boolean isAnonymous(Principal principal) {
			return principal instanceof AnonymousAuthenticationToken;
		}

	}

}
