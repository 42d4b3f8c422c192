package io.github.ratelimit.e2e;

import java.net.http.HttpResponse;
import java.util.concurrent.atomic.AtomicLong;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.security.authentication.UsernamePasswordAuthenticationToken;
import org.springframework.security.config.Customizer;
import org.springframework.security.config.annotation.web.builders.HttpSecurity;
import org.springframework.security.core.authority.AuthorityUtils;
import org.springframework.security.core.context.SecurityContextHolder;
import org.springframework.security.core.userdetails.User;
import org.springframework.security.provisioning.InMemoryUserDetailsManager;
import org.springframework.security.web.SecurityFilterChain;
import org.springframework.stereotype.Service;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

import io.github.ratelimit.RateLimitExceededException;
import io.github.ratelimit.RateLimited;
import io.github.ratelimit.internal.core.RateLimitClock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * Plans over real HTTP with Spring Security: users with a {@code PLAN_} authority get
 * their plan's limit, on annotated handlers, on route limits and on non-web beans, and a
 * user whose plan changes keeps their bucket.
 */
@SpringBootTest(classes = PlansIntegrationTests.PlansApplication.class, webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { "ratelimit.store=memory", "ratelimit.policies.api.capacity=3", "ratelimit.policies.api.period=1m",
				"ratelimit.policies.api.plans.pro.capacity=6",
				"ratelimit.policies.api.plans.enterprise.capacity=12",
				"ratelimit.policies.api.plans.enterprise.refill-tokens=120",
				"ratelimit.policies.routed.capacity=2", "ratelimit.policies.routed.period=1h",
				"ratelimit.policies.routed.key=ip", "ratelimit.policies.routed.plans.pro.capacity=4",
				"ratelimit.routes[0].path=/plans/routed", "ratelimit.routes[0].policy=routed",
				"ratelimit.policies.jobs.capacity=1", "ratelimit.policies.jobs.period=1h",
				"ratelimit.policies.jobs.plans.pro.capacity=3" })
class PlansIntegrationTests {

	static final AtomicLong NOW = new AtomicLong(1_700_000_000_000_000L);

	@LocalServerPort
	int port;

	@Autowired
	InMemoryUserDetailsManager users;

	@Autowired
	Jobs jobs;

	HttpTestClient http;

	@BeforeEach
	void freshBuckets() {
		NOW.addAndGet(3650L * 24 * 3600 * 1_000_000);
		this.http = new HttpTestClient(this.port);
	}

	@AfterEach
	void clearSecurityContext() {
		SecurityContextHolder.clearContext();
	}

	@Test
	void freeAndProUsersGetTheirPlansLimitsAndHeaders() {
		HttpResponse<String> free = get("/plans/api", "fay");
		assertThat(free.statusCode()).isEqualTo(200);
		assertThat(free.headers().firstValue("RateLimit-Policy")).hasValue("\"api\";q=3;w=60");
		assertThat(free.headers().firstValue("RateLimit")).hasValue("\"api\";r=2;t=20");
		HttpResponse<String> pro = get("/plans/api", "pam");
		assertThat(pro.headers().firstValue("RateLimit-Policy")).hasValue("\"api\";q=6;w=60");
		assertThat(pro.headers().firstValue("RateLimit")).hasValue("\"api\";r=5;t=10");
		HttpResponse<String> enterprise = get("/plans/api", "eve");
		assertThat(enterprise.headers().firstValue("RateLimit-Policy")).hasValue("\"api\";q=12;w=6");
		assertThat(get("/plans/api", "fay").statusCode()).isEqualTo(200);
		assertThat(get("/plans/api", "fay").statusCode()).isEqualTo(200);
		HttpResponse<String> rejected = get("/plans/api", "fay");
		assertThat(rejected.statusCode()).isEqualTo(429);
		assertThat(rejected.headers().firstValue("RateLimit-Policy")).hasValue("\"api\";q=3;w=60");
		assertThat(rejected.body()).contains("\"violated-policies\":[\"api\"]");
		for (int i = 4; i >= 0; i--) {
			assertThat(get("/plans/api", "pam").headers().firstValue("RateLimit")).hasValue("\"api\";r=" + i + ";t=10");
		}
		assertThat(get("/plans/api", "pam").statusCode()).isEqualTo(429);
	}

	@Test
	void upgradeMidStreamRaisesTheLimitWithoutResettingTheBucket() {
		assertThat(get("/plans/api", "uma").headers().firstValue("RateLimit")).hasValue("\"api\";r=2;t=20");
		assertThat(get("/plans/api", "uma").headers().firstValue("RateLimit")).hasValue("\"api\";r=1;t=20");
		setPlan("uma", "PLAN_pro");
		// two of six used before the upgrade, one now: three left, not five and not six
		HttpResponse<String> upgraded = get("/plans/api", "uma");
		assertThat(upgraded.headers().firstValue("RateLimit-Policy")).hasValue("\"api\";q=6;w=60");
		assertThat(upgraded.headers().firstValue("RateLimit")).hasValue("\"api\";r=3;t=10");
		for (int i = 0; i < 3; i++) {
			assertThat(get("/plans/api", "uma").statusCode()).isEqualTo(200);
		}
		assertThat(get("/plans/api", "uma").statusCode()).isEqualTo(429);
		setPlan("uma");
		HttpResponse<String> downgraded = get("/plans/api", "uma");
		assertThat(downgraded.statusCode()).isEqualTo(429);
		assertThat(downgraded.headers().firstValue("RateLimit-Policy")).hasValue("\"api\";q=3;w=60");
	}

	@Test
	void clientCannotPickItsPlanThroughAHeaderOrAsAnonymous() {
		HttpResponse<String> anonymous = this.http.get("/plans/open", "X-Plan", "enterprise");
		assertThat(anonymous.statusCode()).isEqualTo(200);
		assertThat(anonymous.headers().firstValue("RateLimit-Policy")).hasValue("\"api\";q=3;w=60");
	}

	@Test
	void routeLimitWithPlansIsDecidedForTheAuthenticatedUsersPlan() {
		for (int i = 0; i < 4; i++) {
			HttpResponse<String> admitted = get("/plans/routed", "pam");
			assertThat(admitted.statusCode()).isEqualTo(200);
			assertThat(admitted.headers().firstValue("RateLimit-Policy")).hasValue("\"routed\";q=4;w=3600");
		}
		assertThat(get("/plans/routed", "pam").statusCode()).isEqualTo(429);
	}

	@Test
	void annotatedBeanOutsideWebRequestsUsesThePlanOfTheAuthenticatedUser() {
		authenticate("pam", "PLAN_pro");
		for (int i = 0; i < 3; i++) {
			assertThat(this.jobs.run()).isEqualTo("ran");
		}
		assertThatExceptionOfType(RateLimitExceededException.class).isThrownBy(this.jobs::run)
			.satisfies((ex) -> assertThat(ex.getDecisions().get(0).limit().capacity()).isEqualTo(3));
		authenticate("fay");
		assertThat(this.jobs.run()).isEqualTo("ran");
		assertThatExceptionOfType(RateLimitExceededException.class).isThrownBy(this.jobs::run)
			.satisfies((ex) -> assertThat(ex.getDecisions().get(0).limit().capacity()).isEqualTo(1));
	}

	private HttpResponse<String> get(String path, String user) {
		return this.http.get(path, HttpTestClient.basic(user, "pw"));
	}

	private void setPlan(String user, String... plans) {
		String[] authorities = java.util.stream.Stream.concat(java.util.stream.Stream.of("ROLE_USER"),
				java.util.Arrays.stream(plans)).toArray(String[]::new);
		this.users.updateUser(User.withUsername(user).password("{noop}pw").authorities(authorities).build());
	}

	private static void authenticate(String user, String... authorities) {
		SecurityContextHolder.getContext().setAuthentication(UsernamePasswordAuthenticationToken.authenticated(user,
				"pw", AuthorityUtils.createAuthorityList(authorities)));
	}

	@Configuration(proxyBeanMethods = false)
	@EnableAutoConfiguration(excludeName = "org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration")
	@Import({ PlansController.class, Jobs.class })
	static class PlansApplication {

		@Bean
		RateLimitClock rateLimitClock() {
			return NOW::get;
		}

		@Bean
		InMemoryUserDetailsManager users() {
			return new InMemoryUserDetailsManager(
					User.withUsername("fay").password("{noop}pw").roles("USER").build(),
					User.withUsername("uma").password("{noop}pw").roles("USER").build(),
					User.withUsername("pam").password("{noop}pw").authorities("ROLE_USER", "PLAN_pro").build(),
					User.withUsername("eve").password("{noop}pw").authorities("ROLE_USER", "PLAN_enterprise").build());
		}

		@Bean
		SecurityFilterChain security(HttpSecurity http) throws Exception {
			http.csrf((csrf) -> csrf.disable())
				.authorizeHttpRequests((requests) -> requests.requestMatchers("/plans/open")
					.permitAll()
					.anyRequest()
					.authenticated())
				.httpBasic(Customizer.withDefaults());
			return http.build();
		}

	}

	@RestController
	static class PlansController {

		@RateLimited("api")
		@GetMapping("/plans/api")
		String api() {
			return "api";
		}

		@RateLimited(name = "api", key = io.github.ratelimit.KeySource.IP)
		@GetMapping("/plans/open")
		String open() {
			return "open";
		}

		@GetMapping("/plans/routed")
		String routed() {
			return "routed";
		}

	}

	@Service
	static class Jobs {

		@RateLimited("jobs")
		String run() {
			return "ran";
		}

	}

}
