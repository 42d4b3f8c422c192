package io.github.ratelimit.internal.redis;

import java.time.Duration;
import java.util.List;
import java.util.Set;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.data.redis.core.StringRedisTemplate;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.store.Acquisition;
import io.github.ratelimit.store.RateLimit;
import io.github.ratelimit.store.RateLimitResult;
import io.github.ratelimit.store.contract.MutableClock;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A flood of distinct identities at a login endpoint limited per address and per
 * username, against a real Redis: Erin's used-up username bucket survives it, a request
 * another limit rejects leaves no key behind, and every key the admitted flood writes
 * expires.
 */
class RedisUsedUpBucketFloodTests {

	@RegisterExtension
	static final SharedRedisConnection redisConnection = new SharedRedisConnection();

	private static final int FLOOD = 20_000;

	private static final String PREFIX = "login-flood:";

	private static final RateLimit LOGIN_IP = RateLimit.of("login-ip", Algorithm.TOKEN_BUCKET, 10,
			Duration.ofMinutes(1));

	private static final RateLimit LOGIN_USERNAME = RateLimit.of("login-username", Algorithm.SLIDING_WINDOW_LOG, 5,
			Duration.ofMinutes(1));

	private static final String ERIN = "user:erin";

	private final MutableClock clock = new MutableClock();

	private RedisRateLimitStore store;

	private StringRedisTemplate redis;

	@BeforeEach
	void store() {
		this.redis = new StringRedisTemplate(redisConnection.factory());
		Set<String> stale = this.redis.keys(PREFIX + "*");
		if (stale != null && !stale.isEmpty()) {
			this.redis.delete(stale);
		}
		this.store = RedisRateLimitStore.builder(redisConnection.factory())
			.keyPrefix(PREFIX)
			.clock(this.clock)
			.timeout(Duration.ofSeconds(5))
			.build();
	}

	@Test
	void floodRejectedByAnotherLimitLeavesNoKeyAndErinLockedOut() {
		useUpErinsBucket();
		String attacker = "ip:203.0.113.9";
		for (int i = 0; i < 10; i++) {
			assertThat(login(attacker, "user:guess-" + i).allowed()).isTrue();
		}
		long keysBefore = keys();
		for (int i = 0; i < FLOOD; i++) {
			this.clock.advanceMicros(1);
			RateLimitResult result = login(attacker, "user:flood-" + i);
			assertThat(result.allowed()).isFalse();
		}
		assertThat(keys()).as("keys after the rejected flood").isEqualTo(keysBefore);
		assertErinIsLockedOut();
	}

	@Test
	void floodEveryLimitAdmitsLeavesErinLockedOutAndOnlyExpiringKeys() {
		useUpErinsBucket();
		for (int i = 0; i < FLOOD; i++) {
			this.clock.advanceMicros(1);
			String address = "ip:10." + (i >> 16) + "." + ((i >> 8) & 0xff) + "." + (i & 0xff);
			assertThat(login(address, "user:flood-" + i).allowed()).isTrue();
		}
		assertErinIsLockedOut();
		for (String key : this.redis.keys(PREFIX + "*")) {
			assertThat(this.redis.getExpire(key)).as("TTL of %s", key).isPositive();
		}
	}

	private void useUpErinsBucket() {
		for (int i = 0; i < 5; i++) {
			assertThat(login("ip:198.51.100.7", ERIN).allowed()).isTrue();
		}
		assertThat(login("ip:198.51.100.7", ERIN).allowed()).isFalse();
	}

	private void assertErinIsLockedOut() {
		RateLimitResult fromElsewhere = login("ip:192.0.2.1", ERIN);
		assertThat(fromElsewhere.allowed()).isFalse();
		assertThat(fromElsewhere.rejections()).singleElement()
			.satisfies((rejection) -> assertThat(rejection.limit()).isEqualTo(LOGIN_USERNAME))
			.satisfies((rejection) -> assertThat(rejection.retryAfterMicros()).isGreaterThan(55_000_000));
	}

	private long keys() {
		Set<String> keys = this.redis.keys(PREFIX + "*");
		return (keys != null) ? keys.size() : 0;
	}

	private RateLimitResult login(String address, String username) {
		return this.store.tryAcquire(
				List.of(new Acquisition(LOGIN_IP, address, 1), new Acquisition(LOGIN_USERNAME, username, 1)));
	}

}
