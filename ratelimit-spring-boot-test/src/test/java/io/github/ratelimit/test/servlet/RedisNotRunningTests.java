package io.github.ratelimit.test.servlet;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;

import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.webmvc.test.autoconfigure.AutoConfigureMockMvc;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.http.HttpStatus;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.test.web.servlet.assertj.MockMvcTester;

import io.github.ratelimit.internal.core.RateLimiter;
import io.github.ratelimit.test.AutoConfigureRateLimitTest;
import io.github.ratelimit.test.RateLimitDecisions;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * An application configured for Redis ({@code spring-boot-starter-data-redis} and
 * {@code spring.data.redis.*}) tested with no Redis running: the test support decides in
 * memory, resets between tests, and never connects.
 */
@SpringBootTest(properties = "spring.data.redis.host=127.0.0.1")
@AutoConfigureMockMvc
@AutoConfigureRateLimitTest
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class RedisNotRunningTests {

	@DynamicPropertySource
	static void redisWhereNothingListens(DynamicPropertyRegistry registry) {
		registry.add("spring.data.redis.port", RedisNotRunningTests::closedPort);
	}

	@Autowired
	private MockMvcTester mvc;

	@Autowired
	private RateLimiter rateLimiter;

	@Autowired
	private RedisConnectionFactory redisConnectionFactory;

	@Autowired
	private RateLimitDecisions decisions;

	@Test
	@Order(1)
	void theMemoryStoreDecides() {
		assertThat(this.redisConnectionFactory).as("the application is configured for Redis").isNotNull();
		assertThat(this.rateLimiter.getStore().name()).isEqualTo("memory");
		assertThat(this.mvc.get().uri("/greetings")).hasStatusOk();
		assertThat(this.mvc.get().uri("/greetings")).hasStatusOk();
		assertThat(this.mvc.get().uri("/greetings")).hasStatus(HttpStatus.TOO_MANY_REQUESTS);
	}

	@Test
	@Order(2)
	void bucketsAreForgottenBetweenTests() {
		assertThat(this.mvc.get().uri("/greetings")).hasStatusOk();
		assertThat(this.mvc.get().uri("/greetings")).hasStatusOk();
		assertThat(this.decisions).hasNoRejections();
	}

	/** A loopback port that was free a moment ago, where nothing listens. */
	private static int closedPort() {
		try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
			return socket.getLocalPort();
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

}
