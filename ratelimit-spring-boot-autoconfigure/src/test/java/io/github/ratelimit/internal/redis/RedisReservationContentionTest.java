package io.github.ratelimit.internal.redis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.data.redis.core.StringRedisTemplate;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.store.Acquisition;
import io.github.ratelimit.store.RateLimit;
import io.github.ratelimit.store.RateLimitDecision;
import io.github.ratelimit.store.RateLimitResult;
import io.github.ratelimit.store.contract.MutableClock;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Reservations of waiting callers against a real Redis server: concurrent callers get
 * distinct slots one interval apart, none beyond the longest wait, and the bucket's key
 * lives until every reserved slot has passed.
 */
class RedisReservationContentionTest {

	@RegisterExtension
	static final SharedRedisConnection redisConnection = new SharedRedisConnection();

	private static final int THREADS = 16;

	private static final int REQUESTS_PER_THREAD = 5;

	@Test
	void concurrentReservationsGetDistinctSlotsOneIntervalApartWithinTheLongestWait() throws Exception {
		// one token every 10ms; a caller waits at most 500ms: 51 slots (0, 10ms, ... 500ms) for 80 requests
		long interval = 10_000;
		long maxDelay = 500_000;
		RateLimit limit = new RateLimit("sms", Algorithm.TOKEN_BUCKET, 1, 100, Duration.ofSeconds(1));
		RedisRateLimitStore store = RedisRateLimitStore.builder(redisConnection.factory())
			.keyPrefix("contention:" + System.nanoTime() + ":")
			.clock(new MutableClock())
			.build();
		List<Acquisition> one = List.of(new Acquisition(limit, "global", 1));
		List<RateLimitDecision> decisions = new ArrayList<>();
		ExecutorService threads = Executors.newFixedThreadPool(THREADS);
		try {
			CountDownLatch start = new CountDownLatch(1);
			List<Future<List<RateLimitDecision>>> futures = new ArrayList<>();
			for (int t = 0; t < THREADS; t++) {
				futures.add(threads.submit(() -> {
					start.await();
					List<RateLimitDecision> mine = new ArrayList<>();
					for (int i = 0; i < REQUESTS_PER_THREAD; i++) {
						mine.add(store.tryAcquire(one, maxDelay).decisions().get(0));
					}
					return mine;
				}));
			}
			start.countDown();
			for (Future<List<RateLimitDecision>> future : futures) {
				decisions.addAll(future.get(60, TimeUnit.SECONDS));
			}
		}
		finally {
			threads.shutdownNow();
		}
		List<Long> delays = decisions.stream()
			.filter(RateLimitDecision::allowed)
			.map(RateLimitDecision::delayMicros)
			.sorted()
			.toList();
		List<Long> slots = new ArrayList<>();
		for (long slot = 0; slot <= maxDelay; slot += interval) {
			slots.add(slot);
		}
		assertThat(delays).as("every slot taken exactly once, none beyond the longest wait")
			.containsExactlyElementsOf(slots);
		// the rejected ones reserved nothing: the first free slot is right after the last one taken
		assertThat(decisions).filteredOn((decision) -> !decision.allowed())
			.hasSize(THREADS * REQUESTS_PER_THREAD - slots.size())
			.allSatisfy((decision) -> assertThat(decision.retryAfterMicros()).isEqualTo(maxDelay + interval));
	}

	@Test
	void keyOfAReservedBucketLivesUntilTheReservedSlotHasPassed() {
		// decided on Redis time, so the TTL is the one production keys get
		RedisRateLimitStore store = RedisRateLimitStore.builder(redisConnection.factory())
			.keyPrefix("contention:" + System.nanoTime() + ":")
			.build();
		RateLimit limit = new RateLimit("slow", Algorithm.TOKEN_BUCKET, 1, 1, Duration.ofMinutes(10));
		List<Acquisition> one = List.of(new Acquisition(limit, "global", 1));
		assertThat(store.tryAcquire(one).allowed()).isTrue();
		RateLimitResult reserved = store.tryAcquire(one, TimeUnit.HOURS.toMicros(1));
		assertThat(reserved.allowed()).isTrue();
		long delayMillis = TimeUnit.MICROSECONDS.toMillis(reserved.delayMicros());
		assertThat(delayMillis).isGreaterThan(TimeUnit.MINUTES.toMillis(9));
		Long ttl = new StringRedisTemplate(redisConnection.factory()).getExpire(store.key(one.get(0)), TimeUnit.MILLISECONDS);
		// the bucket is full again one interval after the reserved slot
		assertThat(ttl).isGreaterThan(delayMillis + TimeUnit.MINUTES.toMillis(9));
	}

}
