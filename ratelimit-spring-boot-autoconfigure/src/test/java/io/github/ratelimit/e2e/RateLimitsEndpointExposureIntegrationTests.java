package io.github.ratelimit.e2e;

import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.ApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.security.config.annotation.web.builders.HttpSecurity;
import org.springframework.security.web.SecurityFilterChain;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

import io.github.ratelimit.RateLimited;
import io.github.ratelimit.internal.actuate.RateLimitsEndpoint;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Like every actuator endpoint, {@code ratelimits} stays off HTTP until the application
 * exposes it, even where security lets everyone through.
 */
@SpringBootTest(classes = RateLimitsEndpointExposureIntegrationTests.OpenApplication.class,
		webEnvironment = WebEnvironment.RANDOM_PORT)
class RateLimitsEndpointExposureIntegrationTests {

	@LocalServerPort
	int port;

	@Autowired
	ApplicationContext context;

	@Test
	void isNotReachableOverHttpUnlessExposed() {
		HttpTestClient http = new HttpTestClient(this.port);
		assertThat(http.get("/limited").statusCode()).isEqualTo(200);
		assertThat(http.get("/actuator/health").statusCode()).as("actuator itself is there").isEqualTo(200);
		assertThat(http.get("/actuator/ratelimits").statusCode()).isEqualTo(404);
		assertThat(http.get("/actuator/ratelimits?name=limited&identity=global").statusCode()).isEqualTo(404);
		assertThat(http.delete("/actuator/ratelimits?name=limited&identity=global").statusCode()).isIn(404, 405);
		assertThat(this.context.getBeansOfType(RateLimitsEndpoint.class)).isEmpty();
	}

	@SpringBootConfiguration
	// every endpoint is public: no generated user and password
	@EnableAutoConfiguration(
			excludeName = { "org.springframework.boot.security.autoconfigure.UserDetailsServiceAutoConfiguration",
					"org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration" })
	@Import(OpenApplication.LimitedController.class)
	static class OpenApplication {

		@Bean
		SecurityFilterChain security(HttpSecurity http) throws Exception {
			return http.authorizeHttpRequests((requests) -> requests.anyRequest().permitAll())
				.csrf((csrf) -> csrf.disable())
				.build();
		}

		@RestController
		static class LimitedController {

			@RateLimited(name = "limited", capacity = 100, period = "1h")
			@GetMapping("/limited")
			String limited() {
				return "limited";
			}

		}

	}

}
