package io.github.ratelimit.test;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.support.GenericApplicationContext;
import org.springframework.core.env.MapPropertySource;
import org.springframework.data.redis.RedisConnectionFailureException;
import org.springframework.test.context.ContextCustomizer;

import io.github.ratelimit.autoconfigure.RateLimitAutoConfiguration;
import io.github.ratelimit.internal.core.RateLimiter;
import io.github.ratelimit.test.AutoConfigureRateLimitTest.Store;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

/**
 * Which store decides a test's limits: memory unless the test asks for the application's,
 * and a clear message when the application's store is not there to reset.
 */
class RateLimitTestStoreTests {

	private final RateLimitTestStoreContextCustomizerFactory factory = new RateLimitTestStoreContextCustomizerFactory();

	@Test
	void aTestDecidesInMemoryByDefault() {
		ContextCustomizer customizer = this.factory.createContextCustomizer(MemoryByDefault.class, List.of());
		assertThat(customizer).isNotNull().isEqualTo(this.factory.createContextCustomizer(MemoryByDefault.class, List.of()));
		GenericApplicationContext context = new GenericApplicationContext();
		context.getEnvironment()
			.getPropertySources()
			.addFirst(new MapPropertySource("Inlined Test Properties", Map.of("other", "x")));
		context.getEnvironment()
			.getPropertySources()
			.addLast(new MapPropertySource("application.properties", Map.of("ratelimit.store", "redis")));
		customizer.customizeContext(context, null);
		assertThat(context.getEnvironment().getProperty("ratelimit.store")).isEqualTo("memory");
	}

	@Test
	void theTestsOwnPropertiesStillChooseTheStore() {
		GenericApplicationContext context = new GenericApplicationContext();
		context.getEnvironment()
			.getPropertySources()
			.addFirst(new MapPropertySource("Inlined Test Properties", Map.of("ratelimit.store", "redis")));
		this.factory.createContextCustomizer(MemoryByDefault.class, List.of()).customizeContext(context, null);
		assertThat(context.getEnvironment().getProperty("ratelimit.store")).isEqualTo("redis");
	}

	@Test
	void aTestThatAsksForTheApplicationsStoreGetsIt() {
		assertThat(this.factory.createContextCustomizer(ApplicationStore.class, List.of())).isNull();
	}

	@Test
	void aTestWithoutTheAnnotationIsLeftAlone() {
		assertThat(this.factory.createContextCustomizer(NotAnnotated.class, List.of())).isNull();
	}

	@Test
	void resetSaysHowToTestWithoutRedisWhenTheApplicationsRedisIsNotRunning() {
		new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class, RateLimitAutoConfiguration.class,
					RateLimitTestAutoConfiguration.class))
			.withPropertyValues("spring.data.redis.host=127.0.0.1", "spring.data.redis.port=" + closedPort(),
					"spring.data.redis.connect-timeout=1s")
			.run((context) -> {
				assertThat(context.getBean(RateLimiter.class).getStore().name()).isEqualTo("redis");
				assertThatIllegalStateException().isThrownBy(() -> context.getBean(RateLimitTestReset.class).reset())
					.withMessageStartingWith("Rate limit store 'redis' could not forget its buckets before the test (")
					.withMessageEndingWith("The test runs on the application's store "
							+ "(@AutoConfigureRateLimitTest(store = APPLICATION)), which must be running; leave store "
							+ "at MEMORY to decide the test's limits in memory")
					.withRootCauseInstanceOf(java.net.ConnectException.class)
					.havingCause()
					.isInstanceOf(RedisConnectionFailureException.class);
			});
	}

	private static int closedPort() {
		try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
			return socket.getLocalPort();
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

	@AutoConfigureRateLimitTest
	static class MemoryByDefault {

	}

	@AutoConfigureRateLimitTest(store = Store.APPLICATION)
	static class ApplicationStore {

	}

	static class NotAnnotated {

	}

}
