package io.github.ratelimit.internal.redis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import io.lettuce.core.cluster.SlotHash;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import org.springframework.data.redis.connection.DataType;
import org.springframework.data.redis.core.StringRedisTemplate;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.store.Acquisition;
import io.github.ratelimit.store.BucketSnapshot;
import io.github.ratelimit.store.RateLimit;
import io.github.ratelimit.store.RateLimitResult;
import io.github.ratelimit.store.RateLimitStore;
import io.github.ratelimit.store.contract.MutableClock;
import io.github.ratelimit.store.contract.RateLimitStoreContractTests;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The store contract with the hash-per-slot key layout against a real Redis server, plus
 * what the layout itself promises: the token and leaky buckets of a limit are fields of
 * one hash per slot, in the slot of the identity, kept alive by their longest bucket and
 * pruned of buckets that stopped mattering.
 */
class RedisHashPerSlotStoreTests extends RateLimitStoreContractTests {

	@RegisterExtension
	static final SharedRedisConnection redisConnection = new SharedRedisConnection();

	private static final String PREFIX = "test:";

	@Override
	protected RateLimitStore createStore(MutableClock clock) {
		RedisTestServer.shared().flushAll();
		return RedisRateLimitStore.builder(redisConnection.factory())
			.keyPrefix(PREFIX)
			.clock(clock)
			.layout(RedisKeyLayout.HASH_PER_SLOT)
			.build();
	}

	@Override
	protected RedisRateLimitStore store() {
		return (RedisRateLimitStore) super.store();
	}

	@ParameterizedTest
	@EnumSource(value = Algorithm.class, names = { "TOKEN_BUCKET", "LEAKY_BUCKET" })
	void bucketsAreFieldsOfAHashInTheSlotOfTheirIdentity(Algorithm algorithm) {
		RateLimit limit = RateLimit.of("GET /orders/{id}", algorithm, 5, Duration.ofMinutes(1));
		Acquisition acquisition = new Acquisition(limit, "user:alice", 1);
		assertThat(store().tryAcquire(List.of(acquisition)).allowed()).isTrue();
		String key = store().key(acquisition);
		assertThat(key).matches("test:\\{[0-9a-zA-Z]{1,3}\\}:" + limit.id() + ":h")
			.satisfies((hash) -> assertThat(SlotHash.getSlot(hash)).isEqualTo(SlotHash.getSlot("user:alice")));
		assertThat(store().field(acquisition)).isEqualTo("user:alice");
		assertThat(redis().type(key)).isEqualTo(DataType.HASH);
		// the time the bucket is full again and the interval it was computed with, as a key holds them
		assertThat(RedisValues.field(redis(), key, "user:alice")).matches("\\d{16}:12000000");
		assertThat(redis().getExpire(key)).isPositive();
	}

	@ParameterizedTest
	@EnumSource(value = Algorithm.class, names = { "FIXED_WINDOW", "SLIDING_WINDOW_LOG", "SLIDING_WINDOW_COUNTER",
			"CONCURRENCY" })
	void otherAlgorithmsKeepAKeyPerBucket(Algorithm algorithm) {
		RateLimit limit = RateLimit.of("GET /orders/{id}", algorithm, 5, Duration.ofMinutes(1));
		Acquisition acquisition = new Acquisition(limit, "user:alice", 1);
		assertThat(store().tryAcquire(List.of(acquisition)).allowed()).isTrue();
		assertThat(store().key(acquisition)).isEqualTo("test:{user:alice}:" + limit.id());
		assertThat(store().field(acquisition)).isNull();
		assertThat(redis().type(store().key(acquisition))).isNotEqualTo(DataType.HASH);
	}

	@Test
	void identitiesOfOneSlotShareAHashAndNotTheirBuckets() {
		RateLimit limit = RateLimit.of("shared", Algorithm.TOKEN_BUCKET, 2, Duration.ofMinutes(1));
		List<String> identities = identitiesInOneSlot(2);
		Acquisition first = new Acquisition(limit, identities.get(0), 2);
		Acquisition second = new Acquisition(limit, identities.get(1), 1);
		assertThat(store().key(first)).isEqualTo(store().key(second));
		assertThat(store().tryAcquire(List.of(first)).allowed()).isTrue();
		assertThat(store().tryAcquire(List.of(new Acquisition(limit, identities.get(0), 1))).allowed()).isFalse();
		RateLimitResult other = store().tryAcquire(List.of(second));
		assertThat(other.allowed()).isTrue();
		assertThat(other.decisions().get(0).remaining()).isEqualTo(1);
		assertThat(redis().opsForHash().size(store().key(first))).isEqualTo(2);
	}

	@Test
	void aHashLivesAsLongAsItsLongestBucket() {
		// one token an hour: a bucket is full again an hour per token taken
		RateLimit limit = RateLimit.of("hourly", Algorithm.TOKEN_BUCKET, 10, Duration.ofHours(10));
		List<String> identities = identitiesInOneSlot(2);
		String key = store().key(new Acquisition(limit, identities.get(0), 1));
		assertThat(store().tryAcquire(List.of(new Acquisition(limit, identities.get(0), 1))).allowed()).isTrue();
		assertThat(redis().getExpire(key, TimeUnit.SECONDS)).isBetween(3_600L - 60, 3_600L);
		assertThat(store().tryAcquire(List.of(new Acquisition(limit, identities.get(1), 3))).allowed()).isTrue();
		assertThat(redis().getExpire(key, TimeUnit.SECONDS)).isBetween(3 * 3_600L - 60, 3 * 3_600L);
		// a shorter bucket written later does not shorten the hash's life
		assertThat(store().tryAcquire(List.of(new Acquisition(limit, identities.get(0), 1))).allowed()).isTrue();
		assertThat(redis().getExpire(key, TimeUnit.SECONDS)).isBetween(3 * 3_600L - 60, 3 * 3_600L);
	}

	@Test
	void newBucketsDropBucketsThatStoppedMattering() {
		RateLimit limit = RateLimit.of("pruned", Algorithm.TOKEN_BUCKET, 1, Duration.ofSeconds(1));
		List<String> identities = identitiesInOneSlot(80);
		String key = store().key(new Acquisition(limit, identities.get(0), 1));
		for (String identity : identities.subList(0, 40)) {
			assertThat(store().tryAcquire(List.of(new Acquisition(limit, identity, 1))).allowed()).isTrue();
		}
		assertThat(redis().opsForHash().size(key)).isEqualTo(40);
		// every bucket so far is full again: it no longer matters
		clock().advance(Duration.ofSeconds(10));
		for (String identity : identities.subList(40, 80)) {
			assertThat(store().tryAcquire(List.of(new Acquisition(limit, identity, 1))).allowed()).isTrue();
		}
		// each new field samples three others and drops those full again; the live ones all stay
		assertThat(redis().opsForHash().size(key)).isLessThan(60);
		for (String identity : identities.subList(40, 80)) {
			assertThat(redis().opsForHash().hasKey(key, identity)).as(identity).isTrue();
			assertThat(store().tryAcquire(List.of(new Acquisition(limit, identity, 1))).allowed()).as(identity)
				.isFalse();
		}
	}

	@Test
	void aHashUnderAFloodOfNewIdentitiesHoldsAboutItsLiveBuckets() {
		// a bucket matters for a second after its request; a new identity every 20 ms: 50 live
		RateLimit limit = RateLimit.of("flood", Algorithm.TOKEN_BUCKET, 1, Duration.ofSeconds(1));
		List<String> identities = identitiesInOneSlot(600);
		String key = store().key(new Acquisition(limit, identities.get(0), 1));
		long most = 0;
		for (String identity : identities) {
			assertThat(store().tryAcquire(List.of(new Acquisition(limit, identity, 1))).allowed()).isTrue();
			most = Math.max(most, redis().opsForHash().size(key));
			clock().advance(Duration.ofMillis(20));
		}
		// without pruning it would hold all 600; sampling keeps it near one and a half times the live 50
		assertThat(most).isBetween(50L, 150L);
	}

	@Test
	void resetDeletesOnlyItsIdentitysBucket() {
		RateLimit limit = RateLimit.of("reset", Algorithm.TOKEN_BUCKET, 1, Duration.ofMinutes(1));
		List<String> identities = identitiesInOneSlot(2);
		for (String identity : identities) {
			assertThat(store().tryAcquire(List.of(new Acquisition(limit, identity, 1))).allowed()).isTrue();
		}
		assertThat(store().reset(limit, identities.get(0))).isTrue();
		assertThat(store().reset(limit, identities.get(0))).isFalse();
		assertThat(store().tryAcquire(List.of(new Acquisition(limit, identities.get(0), 1))).allowed()).isTrue();
		assertThat(store().tryAcquire(List.of(new Acquisition(limit, identities.get(1), 1))).allowed()).isFalse();
	}

	@Test
	void inspectReadsABucketKeptInAHash() {
		RateLimit limit = RateLimit.of("inspected", Algorithm.TOKEN_BUCKET, 5, Duration.ofMinutes(1));
		assertThat(store().inspect(limit, "user:bob").exists()).isFalse();
		assertThat(store().tryAcquire(List.of(new Acquisition(limit, "user:bob", 2))).allowed()).isTrue();
		BucketSnapshot snapshot = store().inspect(limit, "user:bob");
		assertThat(snapshot.exists()).isTrue();
		assertThat(snapshot.remaining()).isEqualTo(3);
		assertThat(store().inspect(limit, "user:carol").exists()).isFalse();
	}

	@Test
	void identitiesCannotReachAnotherIdentitysField() {
		RateLimit limit = RateLimit.of("fields", Algorithm.TOKEN_BUCKET, 1, Duration.ofMinutes(1));
		assertThat(store().tryAcquire(List.of(new Acquisition(limit, "x}{evil", 1))).allowed()).isTrue();
		// the escaped form of the same text is another identity, with a bucket of its own
		assertThat(store().tryAcquire(List.of(new Acquisition(limit, "x%7D%7Bevil", 1))).allowed()).isTrue();
		assertThat(store().tryAcquire(List.of(new Acquisition(limit, "x}{evil", 1))).allowed()).isFalse();
	}

	@Test
	void switchingLayoutsNeverReadsAKeyOfTheOtherLayout() {
		RateLimit limit = RateLimit.of("switched", Algorithm.TOKEN_BUCKET, 1, Duration.ofMinutes(1));
		// "0" is the tag of its own slot: a key of its own and a hash would share a name but for the suffix
		Acquisition acquisition = new Acquisition(limit, "0", 1);
		RedisRateLimitStore keyPerBucket = RedisRateLimitStore.builder(redisConnection.factory())
			.keyPrefix(PREFIX)
			.clock(clock())
			.build();
		assertThat(keyPerBucket.key(acquisition)).isEqualTo("test:{0}:" + limit.id());
		assertThat(store().key(acquisition)).isEqualTo("test:{0}:" + limit.id() + ":h");
		assertThat(keyPerBucket.tryAcquire(List.of(acquisition)).allowed()).isTrue();
		// each layout starts afresh, and neither fails on the other's key
		assertThat(store().tryAcquire(List.of(acquisition)).allowed()).isTrue();
		assertThat(store().tryAcquire(List.of(acquisition)).allowed()).isFalse();
		assertThat(keyPerBucket.tryAcquire(List.of(acquisition)).allowed()).isFalse();
	}

	private static StringRedisTemplate redis() {
		return redisConnection.template();
	}

	/** Identities {@code user:<n>} whose buckets fall into the slot of the first. */
	private static List<String> identitiesInOneSlot(int count) {
		List<String> identities = new ArrayList<>(List.of("user:0"));
		int slot = SlotHash.getSlot("user:0");
		for (int n = 1; identities.size() < count; n++) {
			if (SlotHash.getSlot("user:" + n) == slot) {
				identities.add("user:" + n);
			}
		}
		return identities;
	}

}
