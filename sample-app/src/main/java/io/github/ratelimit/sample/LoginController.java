package io.github.ratelimit.sample;

import java.util.List;

import org.springframework.http.HttpStatus;
import org.springframework.http.ProblemDetail;
import org.springframework.http.ResponseEntity;
import org.springframework.security.authentication.AuthenticationManager;
import org.springframework.security.authentication.UsernamePasswordAuthenticationToken;
import org.springframework.security.core.Authentication;
import org.springframework.security.core.AuthenticationException;
import org.springframework.security.core.GrantedAuthority;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.KeySource;
import io.github.ratelimit.RateLimited;

/**
 * Checks credentials, behind two limits against password guessing: one per client IP
 * and one per username, so that neither spreading guesses over many accounts nor over
 * many addresses gets far. The address limit counts every attempt; the username limit
 * counts only failed ones (401s), so signing in often never locks a user out.
 * <p>
 * The user store ignores the case of usernames ({@code ALiCe} signs in as {@code alice}),
 * so the username limit lower-cases them too: otherwise every case variant of a name would
 * be a fresh bucket of guesses for the same account.
 */
@RestController
public class LoginController {

	private final AuthenticationManager authenticationManager;

	LoginController(AuthenticationManager authenticationManager) {
		this.authenticationManager = authenticationManager;
	}

	/**
	 * Checks a username and password.
	 * @param credentials the posted credentials
	 * @return 200 with the user's roles, or 401
	 */
	@RateLimited(name = "login-ip", capacity = 10, period = "1m", key = KeySource.IP)
	@RateLimited(name = "login-username", algorithm = Algorithm.SLIDING_WINDOW_LOG, capacity = 5, period = "1m",
			keyExpression = "#credentials.username?.toLowerCase(T(java.util.Locale).ROOT)", countStatuses = "401")
	@PostMapping("/api/login")
	public ResponseEntity<?> login(@RequestBody Credentials credentials) {
		if (credentials.username() == null || credentials.password() == null) {
			return ResponseEntity.of(ProblemDetail.forStatusAndDetail(HttpStatus.BAD_REQUEST,
					"username and password are required"))
				.build();
		}
		try {
			Authentication authentication = this.authenticationManager
				.authenticate(UsernamePasswordAuthenticationToken.unauthenticated(credentials.username(),
						credentials.password()));
			List<String> roles = authentication.getAuthorities()
				.stream()
				.map(GrantedAuthority::getAuthority)
				.filter((authority) -> authority.startsWith("ROLE_"))
				.toList();
			return ResponseEntity.ok(new LoginResult(authentication.getName(), roles));
		}
		catch (AuthenticationException ex) {
			return ResponseEntity
				.of(ProblemDetail.forStatusAndDetail(HttpStatus.UNAUTHORIZED, "Bad username or password"))
				.build();
		}
	}

	/**
	 * Posted credentials.
	 *
	 * @param username the username
	 * @param password the password
	 */
	public record Credentials(String username, String password) {

		@Override
		public String toString() {
			return "Credentials[username=" + this.username + ", password=****]";
		}

	}

	/**
	 * A successful login.
	 *
	 * @param username the user
	 * @param roles the user's roles
	 */
	public record LoginResult(String username, List<String> roles) {

	}

}
