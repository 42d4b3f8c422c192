package io.github.ratelimit.internal.redis;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

/**
 * Tests for {@link RedisTestSupport}.
 */
class RedisTestSupportTests {

	@Test
	void explainsHowToInstallRedisWhenItIsMissing() {
		assertThatIllegalStateException()
			.isThrownBy(() -> RedisTestSupport.executable("redis-server-that-does-not-exist", "to run Redis"))
			.withMessageContaining("redis-server-that-does-not-exist is needed to run Redis")
			.withMessageContaining("apt-get install redis-server");
	}

}
