package io.github.ratelimit.internal.redis;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.IntStream;

import io.lettuce.core.cluster.SlotHash;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import org.springframework.data.redis.connection.DataType;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.internal.core.AlgorithmSpec;
import io.github.ratelimit.internal.redis.RedisTestCluster.HostAndPort;
import io.github.ratelimit.store.Acquisition;
import io.github.ratelimit.store.RateLimit;
import io.github.ratelimit.store.RateLimitDecision;
import io.github.ratelimit.store.RateLimitResult;
import io.github.ratelimit.store.RateLimitStore;
import io.github.ratelimit.store.contract.MutableClock;
import io.github.ratelimit.store.contract.RateLimitStoreContractTests;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The store contract against a real three-master Redis Cluster, plus what only a cluster
 * shows: keys spread over slots and masters by identity, one script call per slot, and
 * requests whose limits fall into several slots staying all-or-nothing.
 */
class RedisClusterStoreTest extends RateLimitStoreContractTests {

	/** A limit named like a route template: its braces must not become the hash tag. */
	private static final String ROUTE = "GET /api/orders/{id}";

	private static final String USER = "user:alice";

	private static final String IP = "ip:203.0.113.9";

	private static final Pattern CALLS = Pattern.compile("^calls=(\\d+)");

	private static LettuceConnectionFactory connectionFactory;

	private static StringRedisTemplate redis;

	@BeforeAll
	static void connect() {
		connectionFactory = RedisTestCluster.shared().connectionFactory();
		redis = new StringRedisTemplate(connectionFactory);
		warmUp();
	}

	/**
	 * The contract's buckets expire in Redis within a second of real time, while its clock
	 * stands still: connect to every master, load the script and the classes before the
	 * first test, so that no pause between two calls outlasts a bucket.
	 */
	private static void warmUp() {
		loadScriptOnEveryMaster();
		RedisRateLimitStore store = RedisRateLimitStore.builder(connectionFactory)
			.keyPrefix("warm-up:")
			.clock(new MutableClock())
			.build();
		RateLimit limit = RateLimit.of("warm-up", Algorithm.TOKEN_BUCKET, 1, Duration.ofSeconds(1));
		List<Acquisition> request = IntStream.range(0, 20)
			.mapToObj((i) -> new Acquisition(limit, "user:u" + i, 1))
			.toList();
		assertThat(store.tryAcquire(request).allowed()).isTrue();
		RedisTestCluster.shared().flushAll();
	}

	@AfterAll
	static void disconnect() {
		connectionFactory.destroy();
	}

	@Override
	protected RateLimitStore createStore(MutableClock clock) {
		RedisTestCluster.shared().flushAll();
		return RedisRateLimitStore.builder(connectionFactory).keyPrefix("test:").clock(clock).build();
	}

	@ParameterizedTest
	@EnumSource(Algorithm.class)
	void everyAlgorithmAdmitsExactlyItsCapacityAcrossSlotsThenRejects(Algorithm algorithm) {
		RateLimit perUser = RateLimit.of(ROUTE, algorithm, 7, Duration.ofHours(1));
		RateLimit perUserDaily = RateLimit.of(ROUTE + " daily", algorithm, 100, Duration.ofDays(1));
		RateLimit perIp = RateLimit.of("GET /api/orders/{id} per ip", algorithm, 100, Duration.ofHours(1));
		List<Acquisition> request = List.of(new Acquisition(perUser, USER, 1), new Acquisition(perIp, IP, 1),
				new Acquisition(perUserDaily, USER, 1));
		assertThat(slotOf(request.get(0))).isEqualTo(slotOf(request.get(2))).isNotEqualTo(slotOf(request.get(1)));
		for (int i = 1; i <= 7; i++) {
			RateLimitResult result = store().tryAcquire(request);
			assertThat(result.allowed()).as("request %d", i).isTrue();
			assertThat(result.decisions()).extracting(RateLimitDecision::remaining)
				.containsExactly(7L - i, 100L - i, 100L - i);
		}
		for (int i = 0; i < 3; i++) {
			RateLimitResult rejected = store().tryAcquire(request);
			assertThat(rejected.allowed()).isFalse();
			assertThat(rejected.rejections()).extracting(RateLimitDecision::limit).containsExactly(perUser);
			assertThat(rejected.rejections().get(0).retryAfterMicros()).isPositive();
		}
		// the rejected requests took nothing from the other limits, in either slot
		assertThat(decide(new Acquisition(perIp, IP, 1)).remaining()).isEqualTo(100 - 7 - 1);
		assertThat(decide(new Acquisition(perUserDaily, USER, 1)).remaining()).isEqualTo(100 - 7 - 1);
	}

	@Test
	void keysOfManyIdentitiesSpreadOverSlotsAndMasters() throws IOException {
		RateLimit limit = RateLimit.of(ROUTE, Algorithm.TOKEN_BUCKET, 5, Duration.ofMinutes(1));
		List<String> keys = new ArrayList<>();
		for (int i = 0; i < 200; i++) {
			Acquisition acquisition = new Acquisition(limit, "user:u" + i, 1);
			assertThat(decide(acquisition).allowed()).isTrue();
			keys.add(store().key(acquisition));
		}
		assertThat(keys.get(7)).isEqualTo("test:{user:u7}:" + limit.id());
		HostAndPort anyMaster = RedisTestCluster.shared().masters().get(0);
		Set<Integer> slots = new HashSet<>();
		for (int i = 0; i < keys.size(); i++) {
			String key = keys.get(i);
			Object keySlot = RedisTestSupport.command(anyMaster.host(), anyMaster.port(),
					RedisTestServer.COMMAND_TIMEOUT, "CLUSTER", "KEYSLOT", key);
			// Redis hashes the identity, never the route's {id}
			assertThat(keySlot).as("CLUSTER KEYSLOT %s", key)
				.isEqualTo((long) SlotHash.getSlot(key))
				.isEqualTo((long) SlotHash.getSlot("user:u" + i));
			slots.add(SlotHash.getSlot(key));
		}
		assertThat(slots).hasSizeGreaterThan(190).doesNotContain(SlotHash.getSlot("id"));
		assertThat(redis.countExistingKeys(keys)).isEqualTo(200);
		List<Long> keysPerMaster = new ArrayList<>();
		for (HostAndPort master : RedisTestCluster.shared().masters()) {
			keysPerMaster.add((Long) RedisTestSupport.command(master.host(), master.port(),
					RedisTestServer.COMMAND_TIMEOUT, "DBSIZE"));
		}
		assertThat(keysPerMaster).as("keys per master").hasSize(3).allSatisfy((count) -> assertThat(count).isPositive());
		assertThat(keysPerMaster.stream().mapToLong(Long::longValue).sum()).isEqualTo(200);
	}

	@Test
	void limitsOfOneIdentityShareASlotAndOneScriptCall() {
		List<Acquisition> request = new ArrayList<>();
		for (Algorithm algorithm : Algorithm.values()) {
			request.add(new Acquisition(RateLimit.of(ROUTE + " " + algorithm, algorithm, 5, Duration.ofMinutes(1)),
					USER, 1));
		}
		assertThat(request).extracting(this::slotOf).containsOnly(SlotHash.getSlot(USER));
		loadScriptOnEveryMaster();
		long before = scriptCalls();
		RateLimitResult result = store().tryAcquire(request);
		assertThat(scriptCalls() - before).as("script calls").isEqualTo(1);
		assertThat(result.allowed()).isTrue();
		assertThat(result.decisions()).extracting(RateLimitDecision::remaining).containsOnly(4L);
		for (Acquisition acquisition : request) {
			assertThat(redis.getExpire(store().key(acquisition))).as("TTL of %s", store().key(acquisition))
				.isPositive();
		}
	}

	@Test
	void hashPerSlotKeepsTheLimitsOfOneIdentityInItsSlotAndOneScriptCall() throws IOException {
		RedisRateLimitStore store = RedisRateLimitStore.builder(connectionFactory)
			.keyPrefix("test:")
			.clock(clock())
			.layout(RedisKeyLayout.HASH_PER_SLOT)
			.build();
		List<Acquisition> request = new ArrayList<>();
		for (Algorithm algorithm : Algorithm.values()) {
			request.add(new Acquisition(RateLimit.of(ROUTE + " " + algorithm, algorithm, 5, Duration.ofMinutes(1)),
					USER, 1));
		}
		assertThat(request).extracting(store::field).containsOnly(USER, null);
		assertThat(request).extracting((acquisition) -> SlotHash.getSlot(store.key(acquisition)))
			.containsOnly(SlotHash.getSlot(USER));
		loadScriptOnEveryMaster();
		long before = scriptCalls();
		RateLimitResult result = store.tryAcquire(request);
		assertThat(scriptCalls() - before).as("script calls").isEqualTo(1);
		assertThat(result.decisions()).extracting(RateLimitDecision::remaining).containsOnly(4L);
		// token buckets of many identities: each hash where the identity's own key would be
		RateLimit limit = RateLimit.of(ROUTE, Algorithm.TOKEN_BUCKET, 5, Duration.ofMinutes(1));
		HostAndPort anyMaster = RedisTestCluster.shared().masters().get(0);
		for (int i = 0; i < 50; i++) {
			Acquisition acquisition = new Acquisition(limit, "user:u" + i, 2);
			assertThat(store.tryAcquire(List.of(acquisition)).decisions().get(0).remaining()).isEqualTo(3);
			String key = store.key(acquisition);
			assertThat(RedisTestSupport.command(anyMaster.host(), anyMaster.port(), RedisTestServer.COMMAND_TIMEOUT,
					"CLUSTER", "KEYSLOT", key))
				.as("CLUSTER KEYSLOT %s", key)
				.isEqualTo((long) SlotHash.getSlot("user:u" + i));
			assertThat(redis.opsForHash().hasKey(key, "user:u" + i)).isTrue();
		}
	}

	@Test
	void limitsOfIdentitiesInDifferentSlotsTakeOneScriptCallPerSlot() {
		RateLimit perUser = RateLimit.of(ROUTE, Algorithm.TOKEN_BUCKET, 5, Duration.ofMinutes(1));
		RateLimit perUserHourly = RateLimit.of(ROUTE + " hourly", Algorithm.FIXED_WINDOW, 50, Duration.ofHours(1));
		RateLimit perIp = RateLimit.of("per ip", Algorithm.SLIDING_WINDOW_LOG, 5, Duration.ofMinutes(1));
		List<Acquisition> request = List.of(new Acquisition(perUser, USER, 1), new Acquisition(perIp, IP, 1),
				new Acquisition(perUserHourly, USER, 1));
		loadScriptOnEveryMaster();
		long before = scriptCalls();
		assertThat(store().tryAcquire(request).allowed()).isTrue();
		assertThat(scriptCalls() - before).as("script calls").isEqualTo(2);
	}

	@Test
	void settleAcrossSlotsAdjustsTheBucketsOfEverySlot() {
		RateLimit perUser = RateLimit.of(ROUTE, Algorithm.TOKEN_BUCKET, 100, Duration.ofHours(1));
		RateLimit perIp = RateLimit.of("per ip", Algorithm.FIXED_WINDOW, 100, Duration.ofHours(1));
		List<Acquisition> reserved = List.of(new Acquisition(perUser, USER, 40), new Acquisition(perIp, IP, 40));
		assertThat(slotOf(reserved.get(0))).isNotEqualTo(slotOf(reserved.get(1)));
		RateLimitResult decided = store().tryAcquire(reserved);
		assertThat(decided.allowed()).isTrue();
		clock().advanceMicros(1_000);
		store().settle(reserved, decided, new long[] { 10, 130 });
		assertThat(store().inspect(perUser, USER).remaining()).isEqualTo(90);
		assertThat(store().inspect(perIp, IP).remaining()).isZero();
		assertThat(store().tryAcquire(List.of(new Acquisition(perIp, IP, 1))).allowed()).isFalse();
	}

	@ParameterizedTest
	@EnumSource(Algorithm.class)
	void requestRejectedByALaterSlotGivesBackWhatTheEarlierSlotTook(Algorithm algorithm) {
		RateLimit perUser = RateLimit.of(ROUTE, algorithm, 5, Duration.ofHours(1));
		RateLimit perIp = RateLimit.of("per ip", algorithm, 1, Duration.ofHours(1));
		Acquisition user = new Acquisition(perUser, USER, 1);
		Acquisition ip = new Acquisition(perIp, IP, 1);
		assertThat(slotOf(user)).isNotEqualTo(slotOf(ip));
		assertThat(store().tryAcquire(List.of(user, ip)).allowed()).isTrue();
		String userState = state(store().key(user));
		String ipState = state(store().key(ip));
		for (int i = 0; i < 3; i++) {
			clock().advanceMicros(1_000);
			RateLimitResult rejected = store().tryAcquire(List.of(user, ip));
			assertThat(rejected.allowed()).isFalse();
			assertThat(rejected.rejections()).extracting(RateLimitDecision::limit).containsExactly(perIp);
			// the user's limit admitted, but reports the quota it still holds
			assertThat(rejected.decisions().get(0).allowed()).isTrue();
			assertThat(rejected.decisions().get(0).remaining()).isEqualTo(4);
			assertThat(state(store().key(user))).as("user bucket in Redis").isEqualTo(userState);
			assertThat(state(store().key(ip))).as("ip bucket in Redis").isEqualTo(ipState);
		}
		assertThat(redis.getExpire(store().key(user))).isPositive();
		// only the first request took from the user's limit
		RateLimitDecision later = decide(new Acquisition(perUser, USER, 4));
		assertThat(later.allowed()).isTrue();
		assertThat(later.remaining()).isZero();
		assertThat(decide(user).allowed()).isFalse();
	}

	@ParameterizedTest
	@EnumSource(Algorithm.class)
	void requestRejectedByTheFirstSlotTakesNothingFromTheLaterSlots(Algorithm algorithm) {
		RateLimit perIp = RateLimit.of("per ip", algorithm, 1, Duration.ofHours(1));
		RateLimit perUser = RateLimit.of(ROUTE, algorithm, 5, Duration.ofHours(1));
		Acquisition ip = new Acquisition(perIp, IP, 1);
		Acquisition user = new Acquisition(perUser, USER, 1);
		assertThat(store().tryAcquire(List.of(ip, user)).allowed()).isTrue();
		String userState = state(store().key(user));
		RateLimitResult rejected = store().tryAcquire(List.of(ip, user));
		assertThat(rejected.allowed()).isFalse();
		assertThat(rejected.rejections()).extracting(RateLimitDecision::limit).containsExactly(perIp);
		assertThat(rejected.decisions().get(1).remaining()).isEqualTo(4);
		assertThat(state(store().key(user))).isEqualTo(userState);
		assertThat(decide(new Acquisition(perUser, USER, 4)).allowed()).isTrue();
	}

	@ParameterizedTest
	@EnumSource(Algorithm.class)
	void refundGivesBackEverySlotOfAnAdmittedRequest(Algorithm algorithm) {
		RateLimit perUser = RateLimit.of(ROUTE, algorithm, 3, Duration.ofHours(1));
		RateLimit perIp = RateLimit.of("per ip", algorithm, 5, Duration.ofHours(1));
		List<Acquisition> request = List.of(new Acquisition(perUser, USER, 2), new Acquisition(perIp, IP, 4));
		RateLimitResult admitted = store().tryAcquire(request);
		assertThat(admitted.allowed()).isTrue();
		clock().advanceMicros(10);
		store().refund(request, admitted);
		RateLimitResult whole = store().tryAcquire(
				List.of(new Acquisition(perUser, USER, 3), new Acquisition(perIp, IP, 5)));
		assertThat(whole.allowed()).isTrue();
		assertThat(whole.decisions()).extracting(RateLimitDecision::remaining).containsExactly(0L, 0L);
	}

	@ParameterizedTest
	@EnumSource(value = Algorithm.class, names = { "TOKEN_BUCKET", "SLIDING_WINDOW_LOG" })
	void requestAcrossSlotsOnRedisTimeIsRefundedAtTheTimeItWasTaken(Algorithm algorithm) {
		RedisRateLimitStore store = RedisRateLimitStore.builder(connectionFactory).keyPrefix("test:").build();
		RateLimit perUser = RateLimit.of(ROUTE, algorithm, 5, Duration.ofHours(1));
		RateLimit perIp = RateLimit.of("per ip", algorithm, 1, Duration.ofHours(1));
		Acquisition user = new Acquisition(perUser, USER, 1);
		Acquisition ip = new Acquisition(perIp, IP, 1);
		assertThat(store.tryAcquire(List.of(user, ip)).allowed()).isTrue();
		String userState = state(store.key(user));
		for (int i = 0; i < 3; i++) {
			assertThat(store.tryAcquire(List.of(user, ip)).allowed()).isFalse();
			assertThat(state(store.key(user))).isEqualTo(userState);
		}
		assertThat(store.tryAcquire(List.of(new Acquisition(perUser, USER, 4))).allowed()).isTrue();
	}

	@Override
	protected RedisRateLimitStore store() {
		return (RedisRateLimitStore) super.store();
	}

	private RateLimitDecision decide(Acquisition acquisition) {
		return store().tryAcquire(List.of(acquisition)).decisions().get(0);
	}

	private int slotOf(Acquisition acquisition) {
		return SlotHash.getSlot(store().key(acquisition));
	}

	/** What Redis holds for a bucket: its value, or a log's entries and sum. */
	private static String state(String key) {
		if (redis.type(key) == DataType.ZSET) {
			return redis.opsForZSet().rangeWithScores(key, 0, -1) + " sum=" + redis.opsForValue().get(key + ":sum");
		}
		return redis.type(key) + " " + RedisValues.value(redis, key);
	}

	/**
	 * So that counting calls sees no NOSCRIPT miss followed by an EVAL: the script of
	 * every combination of algorithms, on every master.
	 */
	private static void loadScriptOnEveryMaster() {
		List<AlgorithmSpec> specs = List.copyOf(AlgorithmSpec.all());
		for (int set = 1; set < (1 << specs.size()); set++) {
			List<AlgorithmSpec> algorithms = new ArrayList<>();
			for (int i = 0; i < specs.size(); i++) {
				if ((set & (1 << i)) != 0) {
					algorithms.add(specs.get(i));
				}
			}
			String script = RedisScripts.acquire(algorithms).getScriptAsString();
			for (HostAndPort master : RedisTestCluster.shared().masters()) {
				try {
					RedisTestSupport.command(master.host(), master.port(), RedisTestServer.COMMAND_TIMEOUT, "SCRIPT",
							"LOAD", script);
				}
				catch (IOException ex) {
					throw new UncheckedIOException(ex);
				}
			}
		}
	}

	/** EVAL and EVALSHA calls served by every master so far. */
	private static long scriptCalls() {
		long calls = 0;
		for (HostAndPort master : RedisTestCluster.shared().masters()) {
			try {
				Object stats = RedisTestSupport.command(master.host(), master.port(), RedisTestServer.COMMAND_TIMEOUT,
						"INFO", "commandstats");
				for (String command : List.of("cmdstat_eval", "cmdstat_evalsha")) {
					String field = RedisTestSupport.field(stats, command);
					if (field != null) {
						Matcher matcher = CALLS.matcher(field);
						assertThat(matcher.find()).as(field).isTrue();
						calls += Long.parseLong(matcher.group(1));
					}
				}
			}
			catch (IOException ex) {
				throw new UncheckedIOException(ex);
			}
		}
		return calls;
	}

}
