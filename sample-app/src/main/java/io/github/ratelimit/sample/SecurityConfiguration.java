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
import org.springframework.security.crypto.bcrypt.BCryptPasswordEncoder;
import org.springframework.security.crypto.password.PasswordEncoder;
import org.springframework.security.provisioning.InMemoryUserDetailsManager;
import org.springframework.security.web.SecurityFilterChain;

/**
 * Security of the sample API: stateless HTTP Basic, with a few public endpoints. The
 * actuator's {@code ratelimits} endpoint, which shows and resets any caller's buckets, is
 * for the {@code ADMIN} role only; health and metrics for any signed-in user.
 * <p>
 * HTTP Basic checks the credentials of every request that carries them, whatever its path,
 * public or not: every endpoint is a login endpoint. Passwords are stored as bcrypt hashes,
 * so each check of a password costs a bcrypt computation (tens of milliseconds of CPU at
 * {@link #BCRYPT_STRENGTH}). What bounds the number of guesses, and so that CPU, are the
 * limits on {@code /**} in {@code application.yml}, keyed by client address:
 * {@code auth-failures}, 10 failed authentications (401s) at once then one every 6
 * seconds, and {@code per-ip}, 120 requests at once then 2 a second. They run in a servlet
 * filter before Spring Security and answer 429 before any password is checked.
 * <p>
 * The users are for the demo only; a real service keeps them in a real user store.
 */
@Configuration(proxyBeanMethods = false)
public class SecurityConfiguration {

	/**
	 * Work factor of the stored bcrypt hashes: 2^10 rounds, Spring Security's default and
	 * the least OWASP recommends; each step up doubles the cost of every password check.
	 */
	static final int BCRYPT_STRENGTH = 10;

	@Bean
	SecurityFilterChain apiSecurity(HttpSecurity http) throws Exception {
		http.authorizeHttpRequests((requests) -> requests
			.requestMatchers("/error").permitAll()
			.requestMatchers("/api/login", "/api/search/**", "/api/tenant/**", "/v1/chat/**").permitAll()
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

	/**
	 * Hashes and checks passwords with bcrypt at an explicit strength. Stored hashes already
	 * have it, so no login rehashes them.
	 */
	@Bean
	PasswordEncoder passwordEncoder() {
		return new BCryptPasswordEncoder(BCRYPT_STRENGTH);
	}

	/**
	 * The demo users. Usernames are compared ignoring case ({@code ALiCe} signs in as
	 * {@code alice}), which is why the limits keyed on a username lower-case it.
	 */
	@Bean
	UserDetailsService demoUsers(PasswordEncoder passwordEncoder) {
		// Demo only: the passwords are in the source. Bob is on the pro plan: the PLAN_pro
		// authority gives him the pro values of every policy that has plans (ratelimit.plans).
		return new InMemoryUserDetailsManager(
				User.withUsername("alice").password(passwordEncoder.encode("alice-secret")).roles("USER").build(),
				User.withUsername("bob")
					.password(passwordEncoder.encode("bob-secret"))
					.authorities("ROLE_USER", "PLAN_pro")
					.build(),
				User.withUsername("admin").password(passwordEncoder.encode("admin-secret")).roles("USER", "ADMIN").build());
	}

	/**
	 * Checks the credentials posted to {@code /api/login}; HTTP Basic builds its own from
	 * the same users and password encoder.
	 */
	@Bean
	AuthenticationManager authenticationManager(UserDetailsService demoUsers, PasswordEncoder passwordEncoder) {
		DaoAuthenticationProvider provider = new DaoAuthenticationProvider(demoUsers);
		provider.setPasswordEncoder(passwordEncoder);
		return new ProviderManager(provider);
	}

}
