package io.github.ratelimit.compat;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import io.github.ratelimit.test.AutoConfigureRateLimitTest;

/** The consumer's suite on Spring MVC (Tomcat), with its limits on Redis. */
@SpringBootTest(classes = ConsumerApplication.class, webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { "spring.main.web-application-type=servlet", "ratelimit.store=redis" })
@AutoConfigureRateLimitTest
class ServletRedisConsumerTests extends ConsumerBehaviourTests {

	@DynamicPropertySource
	static void redis(DynamicPropertyRegistry registry) {
		RedisServerProcess.properties(registry);
	}

}
