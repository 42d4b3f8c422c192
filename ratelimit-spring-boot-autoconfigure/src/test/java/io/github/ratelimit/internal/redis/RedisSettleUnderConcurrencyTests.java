package io.github.ratelimit.internal.redis;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import io.github.ratelimit.store.RateLimitStore;
import io.github.ratelimit.store.contract.MutableClock;
import io.github.ratelimit.store.contract.SettleUnderConcurrencyTests;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Reserve, then settle, with 64 callers on two instances (each its own connection and
 * store) over one Redis server: usage within the limit (or the bound), nothing left
 * reserved, and Redis called once to reserve and once to settle, not at all for a call
 * that used exactly its estimate.
 */
class RedisSettleUnderConcurrencyTests extends SettleUnderConcurrencyTests {

	/** A server of its own, so that every script call it counts is this test's. */
	private static RedisTestServer server;

	private final List<LettuceConnectionFactory> factories = new ArrayList<>();

	private long scriptCallsBefore;

	@BeforeAll
	static void startServer() {
		server = RedisTestServer.start();
	}

	@AfterAll
	static void stopServer() {
		server.close();
	}

	@Override
	protected List<RateLimitStore> createInstances(MutableClock clock) {
		String keyPrefix = "settle-" + System.nanoTime() + ":";
		List<RateLimitStore> instances = new ArrayList<>();
		for (int i = 0; i < 2; i++) {
			LettuceConnectionFactory factory = server.connectionFactory();
			this.factories.add(factory);
			instances.add(RedisRateLimitStore.builder(factory)
				.keyPrefix(keyPrefix)
				.clock(clock)
				.timeout(Duration.ofSeconds(5))
				.build());
		}
		return instances;
	}

	@Override
	protected void beforeCalling() {
		this.scriptCallsBefore = scriptCalls();
	}

	@Override
	protected void calledStore(long calls, long settlements) {
		assertThat(scriptCalls() - this.scriptCallsBefore)
			.as("script calls for %d calls, %d settled at another cost than reserved", calls, settlements)
			.isEqualTo(calls + settlements);
	}

	@Override
	protected void closeInstances(List<RateLimitStore> instances) throws Exception {
		super.closeInstances(instances);
		RedisTestSupport.destroyAll(this.factories);
	}

	private static long scriptCalls() {
		try {
			return RedisTestSupport.scriptCalls(server);
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

}
