package io.github.ratelimit.compat;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;

import io.github.ratelimit.test.AutoConfigureRateLimitTest;

/** The consumer's suite on WebFlux (Reactor Netty), in memory. */
@SpringBootTest(classes = ConsumerApplication.class, webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = "spring.main.web-application-type=reactive")
@AutoConfigureRateLimitTest
class ReactiveConsumerTests extends ConsumerBehaviourTests {

}
