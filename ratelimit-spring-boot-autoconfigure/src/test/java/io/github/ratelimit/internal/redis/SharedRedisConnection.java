package io.github.ratelimit.internal.redis;

import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;

/**
 * A connection to the shared test Redis server for the tests of one class, opened before
 * the first and closed after the last. Register it as a static field with
 * {@code @RegisterExtension}.
 */
final class SharedRedisConnection implements BeforeAllCallback, AfterAllCallback {

	private LettuceConnectionFactory factory;

	private StringRedisTemplate template;

	@Override
	public void beforeAll(ExtensionContext context) {
		this.factory = RedisTestServer.shared().connectionFactory();
		this.template = new StringRedisTemplate(this.factory);
	}

	@Override
	public void afterAll(ExtensionContext context) {
		if (this.factory != null) {
			this.factory.destroy();
		}
	}

	LettuceConnectionFactory factory() {
		return this.factory;
	}

	StringRedisTemplate template() {
		return this.template;
	}

}
