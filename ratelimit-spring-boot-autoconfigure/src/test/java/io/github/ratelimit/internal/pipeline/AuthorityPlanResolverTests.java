package io.github.ratelimit.internal.pipeline;

import java.security.Principal;
import java.util.List;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import org.springframework.security.authentication.AnonymousAuthenticationToken;
import org.springframework.security.authentication.TestingAuthenticationToken;
import org.springframework.security.authentication.UsernamePasswordAuthenticationToken;
import org.springframework.security.core.authority.AuthorityUtils;
import org.springframework.security.core.context.SecurityContextHolder;

import io.github.ratelimit.PlanResolver;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

class AuthorityPlanResolverTests {

	private final PlanResolver resolver = new AuthorityPlanResolver("PLAN_");

	@AfterEach
	void clearSecurityContext() {
		SecurityContextHolder.clearContext();
	}

	@Test
	void planIsTheAuthorityWithoutItsPrefix() {
		assertThat(this.resolver.resolve(user("alice", "ROLE_USER", "PLAN_pro"))).isEqualTo("pro");
	}

	@Test
	void userWithoutAPlanAuthorityHasNoPlan() {
		assertThat(this.resolver.resolve(user("bob", "ROLE_USER", "ROLE_PLAN_pro"))).isNull();
	}

	@Test
	void prefixAloneNamesNoPlan() {
		assertThat(this.resolver.resolve(user("carol", "PLAN_"))).isNull();
	}

	@Test
	void firstPlanAuthorityWins() {
		assertThat(this.resolver.resolve(user("dave", "ROLE_USER", "PLAN_enterprise", "PLAN_free")))
			.isEqualTo("enterprise");
	}

	@Test
	void prefixIsConfigurable() {
		PlanResolver tiers = new AuthorityPlanResolver("TIER:");
		assertThat(tiers.resolve(user("erin", "PLAN_pro", "TIER:gold"))).isEqualTo("gold");
	}

	@Test
	void callersWithoutAnAuthenticationHaveNoPlan() {
		assertThat(this.resolver.resolve(null)).isNull();
		Principal servletPrincipal = () -> "frank";
		assertThat(this.resolver.resolve(servletPrincipal)).isNull();
	}

	@Test
	void anonymousCallerIsNoPrincipalWhateverItsAuthorities() {
		AnonymousAuthenticationToken anonymous = new AnonymousAuthenticationToken("key", "anonymous",
				AuthorityUtils.createAuthorityList("ROLE_ANONYMOUS", "PLAN_pro"));
		SecurityContextHolder.getContext().setAuthentication(anonymous);
		assertThat(PrincipalNames.current(anonymous)).isNull();
	}

	@Test
	void currentPrincipalIsTheAuthenticationOutsideWebRequests() {
		UsernamePasswordAuthenticationToken authentication = user("grace", "PLAN_pro");
		SecurityContextHolder.getContext().setAuthentication(authentication);
		Principal current = PrincipalNames.current(null);
		assertThat(current).isSameAs(authentication);
		assertThat(this.resolver.resolve(current)).isEqualTo("pro");
	}

	@Test
	void unauthenticatedTokenIsNoPrincipal() {
		TestingAuthenticationToken token = new TestingAuthenticationToken("heidi", "pw", List.of());
		token.setAuthenticated(false);
		SecurityContextHolder.getContext().setAuthentication(token);
		assertThat(PrincipalNames.current(null)).isNull();
	}

	@Test
	void rejectsAnEmptyPrefix() {
		assertThatIllegalArgumentException().isThrownBy(() -> new AuthorityPlanResolver(""))
			.withMessage("prefix must not be empty");
	}

	private static UsernamePasswordAuthenticationToken user(String name, String... authorities) {
		return UsernamePasswordAuthenticationToken.authenticated(name, "pw",
				AuthorityUtils.createAuthorityList(authorities));
	}

}
