package io.github.ratelimit.sample;

import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.http.HttpMethod;
import org.springframework.security.authentication.AuthenticationManager;
import org.springframework.security.authentication.ProviderManager;
import org.springframework.security.authentication.dao.DaoAuthenticationProvider;
import org.springframework.security.config.Customizer;
import org.springframework.security.config.annotation.web.builders.HttpSecurity;
import org.springframework.security.config.http.SessionCreationPolicy;
import org.springframework.security.core.userdetails.User;
import org.springframework.security.core.userdetails.UserDetailsService;
import org.springframework.security.provisioning.InMemoryUserDetailsManager;
import org.springframework.security.web.SecurityFilterChain;

/**
 * Security of the sample API: stateless HTTP Basic, with a few public endpoints. The
 * actuator's {@code ratelimits} endpoint, which shows and resets any caller's buckets, is
 * for the {@code ADMIN} role only; health and metrics for any signed-in user.
 * <p>
 * The users and their plain-text ({@code {noop}}) passwords are for the demo only; a real
 * service keeps hashed passwords in a real user store.
 */
@Configuration(proxyBeanMethods = false)
public class SecurityConfiguration {

	@Bean
	SecurityFilterChain apiSecurity(HttpSecurity http) throws Exception {
		http.authorizeHttpRequests((requests) -> requests
			.requestMatchers("/error").permitAll()
			.requestMatchers("/api/login", "/api/search/**", "/api/tenant/**").permitAll()
			.requestMatchers(HttpMethod.GET, "/api/orders/**").permitAll()
			// reads every caller's buckets and resets them: operators only
			.requestMatchers("/actuator/ratelimits", "/actuator/ratelimits/**").hasRole("ADMIN")
			.anyRequest().authenticated());
		http.httpBasic(Customizer.withDefaults());
		// A stateless API authenticated on every request: no session, so no CSRF token.
		http.sessionManagement((session) -> session.sessionCreationPolicy(SessionCreationPolicy.STATELESS));
		http.csrf((csrf) -> csrf.disable());
		return http.build();
	}

	@Bean
	UserDetailsService demoUsers() {
		// Demo only: plain-text passwords. Bob is on the pro plan: the PLAN_pro authority
		// gives him the pro values of every policy that has plans (ratelimit.plans).
		return new InMemoryUserDetailsManager(
				User.withUsername("alice").password("{noop}alice-secret").roles("USER").build(),
				User.withUsername("bob").password("{noop}bob-secret").authorities("ROLE_USER", "PLAN_pro").build(),
				User.withUsername("admin").password("{noop}admin-secret").roles("USER", "ADMIN").build());
	}

	/**
	 * Checks the credentials posted to {@code /api/login}; HTTP Basic builds its own from
	 * the same users.
	 */
	@Bean
	AuthenticationManager authenticationManager(UserDetailsService demoUsers) {
		return new ProviderManager(new DaoAuthenticationProvider(demoUsers));
	}

}
