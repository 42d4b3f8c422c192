package io.github.ratelimit.compat;

import org.junit.jupiter.api.Test;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import io.github.ratelimit.test.AutoConfigureRateLimitTest;

import static org.assertj.core.api.Assertions.assertThat;

/** The consumer's suite on WebFlux (Reactor Netty), with its limits on Redis. */
@SpringBootTest(classes = ConsumerApplication.class, webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { "spring.main.web-application-type=reactive", "ratelimit.store=redis" })
@AutoConfigureRateLimitTest
class ReactiveRedisConsumerTests extends ConsumerBehaviourTests {

	/**
	 * After a decision that Redis answered on another thread, the request goes on on its
	 * connection's event loop, so its response ends the request before the connection reads
	 * the next one (reactor/reactor-netty#4361 on Reactor Netty before 1.3.8).
	 */
	@Test
	void limitedHandlersRunOnTheServersEventLoopAfterARedisDecision() {
		for (int i = 0; i < 3; i++) {
			assertThat(get("/thread").body()).contains("-http-");
		}
	}

	@DynamicPropertySource
	static void redis(DynamicPropertyRegistry registry) {
		RedisServerProcess.properties(registry);
	}

}
