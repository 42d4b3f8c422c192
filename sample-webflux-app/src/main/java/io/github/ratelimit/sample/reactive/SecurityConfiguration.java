package io.github.ratelimit.sample.reactive;

import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.security.config.Customizer;
import org.springframework.security.config.web.server.ServerHttpSecurity;
import org.springframework.security.core.userdetails.MapReactiveUserDetailsService;
import org.springframework.security.core.userdetails.User;
import org.springframework.security.web.server.SecurityWebFilterChain;

/**
 * HTTP Basic on {@code /api/**} with two demo users; alice is on the default plan, bob on
 * the pro plan ({@code PLAN_pro}). The actuator's {@code ratelimits} endpoint, which shows
 * and resets any caller's buckets, is for the {@code ADMIN} role only.
 */
@Configuration(proxyBeanMethods = false)
class SecurityConfiguration {

	@Bean
	MapReactiveUserDetailsService users() {
		// Demo only: the passwords are in the source.
		return new MapReactiveUserDetailsService(
				User.withUsername("alice").password("{noop}alice-secret").roles("USER").build(),
				User.withUsername("bob").password("{noop}bob-secret").authorities("ROLE_USER", "PLAN_pro").build(),
				User.withUsername("admin").password("{noop}admin-secret").roles("USER", "ADMIN").build());
	}

	@Bean
	SecurityWebFilterChain security(ServerHttpSecurity http) {
		return http.csrf(ServerHttpSecurity.CsrfSpec::disable)
			.authorizeExchange((exchanges) -> exchanges
				// reads every caller's buckets and resets them: operators only
				.pathMatchers("/actuator/ratelimits", "/actuator/ratelimits/**").hasRole("ADMIN")
				.pathMatchers("/api/orders/**", "/api/quotes/**").authenticated()
				.anyExchange().permitAll())
			.httpBasic(Customizer.withDefaults())
			.build();
	}

}
