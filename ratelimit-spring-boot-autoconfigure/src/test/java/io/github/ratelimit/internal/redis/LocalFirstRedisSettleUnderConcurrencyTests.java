package io.github.ratelimit.internal.redis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.function.BooleanSupplier;

import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import io.github.ratelimit.internal.core.ThrottledLog;
import io.github.ratelimit.internal.local.LocalFirstRateLimitStore;
import io.github.ratelimit.internal.local.LocalFirstSettings;
import io.github.ratelimit.store.RateLimitStore;
import io.github.ratelimit.store.contract.MutableClock;
import io.github.ratelimit.store.contract.SettleUnderConcurrencyTests;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Reserve, then settle, with 64 callers on two local-first instances over one Redis
 * server, syncing while they call: the shares are counted in Redis before they are spent,
 * so the bound is the exact mode's, and once the instances have given their shares back,
 * Redis holds exactly what was settled.
 */
class LocalFirstRedisSettleUnderConcurrencyTests extends SettleUnderConcurrencyTests {

	private static final Duration SYNC = Duration.ofMillis(10);

	/** Most syncs while the callers call: the clock moves by at most this many intervals. */
	private static final int MAX_SYNCS = 1_000;

	private final List<LettuceConnectionFactory> factories = new ArrayList<>();

	private final List<LocalFirstRateLimitStore> localFirst = new ArrayList<>();

	private final List<RedisRateLimitStore> redis = new ArrayList<>();

	private final Queue<String> warnings = new ConcurrentLinkedQueue<>();

	@Override
	protected List<RateLimitStore> createInstances(MutableClock clock) {
		String keyPrefix = "settle-local-first-" + System.nanoTime() + ":";
		for (int i = 0; i < 2; i++) {
			LettuceConnectionFactory factory = RedisTestServer.shared().connectionFactory();
			this.factories.add(factory);
			RedisRateLimitStore shared = RedisRateLimitStore.builder(factory)
				.keyPrefix(keyPrefix)
				.clock(clock)
				.timeout(Duration.ofSeconds(5))
				.build();
			this.redis.add(shared);
			this.localFirst.add(new LocalFirstRateLimitStore(shared, shared, new LocalFirstSettings(clock, SYNC,
					(limit) -> false, 1_000, new ThrottledLog(0, System::nanoTime), this.warnings::add)));
		}
		return List.copyOf(this.localFirst);
	}

	/** What Redis holds, read without a share of this instance's. */
	@Override
	protected RateLimitStore sharedState(List<RateLimitStore> instances) {
		return this.redis.get(0);
	}

	/**
	 * A share Redis refused waits for the next sync: until then, its instance refuses
	 * calls of that limit though Redis has units left.
	 */
	@Override
	protected boolean refusesOnlyWhatRanOut() {
		return false;
	}

	/** Each instance syncs once per interval of the test's clock, while the callers call. */
	@Override
	protected void whileCalling(MutableClock clock, BooleanSupplier running) {
		for (int i = 0; i < MAX_SYNCS && running.getAsBoolean(); i++) {
			clock.advance(SYNC);
			syncAll();
		}
	}

	/** Idle for two intervals, every share goes back to Redis. */
	@Override
	protected void afterCalling(MutableClock clock) {
		for (int i = 0; i < 3; i++) {
			clock.advance(SYNC);
			syncAll();
		}
		assertThat(this.warnings).isEmpty();
	}

	private void syncAll() {
		for (LocalFirstRateLimitStore instance : this.localFirst) {
			instance.sync().join();
		}
	}

	@Override
	protected void closeInstances(List<RateLimitStore> instances) {
		this.localFirst.forEach(LocalFirstRateLimitStore::close);
		this.redis.forEach(RedisRateLimitStore::close);
		RedisTestSupport.destroyAll(this.factories);
	}

}
