package io.github.ratelimit.internal.core;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.internal.memory.InMemoryRateLimitStore;
import io.github.ratelimit.store.Acquisition;
import io.github.ratelimit.store.RateLimit;
import io.github.ratelimit.store.RateLimitResult;
import io.github.ratelimit.store.contract.MutableClock;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Callers waiting ({@code maxWait}) for a permit of a concurrency limit are woken when a
 * call gives one back, not when their retry-after runs out.
 */
class ReleaseWaitTest {

	private static final RateLimit EXPORTS = RateLimit.of("exports", Algorithm.CONCURRENCY, 1, Duration.ofHours(1));

	private static final RateLimit SEARCHES = RateLimit.of("searches", Algorithm.TOKEN_BUCKET, 1, Duration.ofHours(1));

	private static final List<Acquisition> EXPORT = List.of(new Acquisition(EXPORTS, "acme", 1));

	private final MutableClock clock = new MutableClock();

	private final RateLimiter limiter = new RateLimiter(new InMemoryRateLimitStore(this.clock, 1_000));

	private final ManualScheduler scheduler = new ManualScheduler();

	private final RateLimitWaiter waiter = new RateLimitWaiter(this.limiter, this.clock, new RecordingSleeper(),
			this.scheduler);

	@AfterEach
	void close() {
		this.waiter.close();
	}

	@Test
	void aWatchCompletesWhenAWatchedPermitIsGivenBackAndOnlyThen() {
		RateLimitResult held = this.limiter.acquire(EXPORT);
		assertThat(this.limiter.watchReleases(List.of(new Acquisition(SEARCHES, "acme", 1))))
			.as("a rate limit has nothing to release")
			.isNull();
		try (ReleaseWait other = this.limiter.watchReleases(List.of(new Acquisition(EXPORTS, "globex", 1)));
				ReleaseWait wait = this.limiter.watchReleases(EXPORT)) {
			assertThat(wait.released()).isNotDone();
			this.limiter.refund(EXPORT, held);
			assertThat(wait.released()).isCompleted();
			assertThat(other.released()).as("another identity's bucket").isNotDone();
		}
	}

	@Test
	void waitsThatEndWithoutAReleaseStopWatching() throws Exception {
		this.scheduler.release();
		RateLimitResult held = this.limiter.acquire(EXPORT);
		// gives up when its wait is over, without a release
		RateLimitResult rejected = this.waiter.acquireAsync(EXPORT, Duration.ofMillis(1_500)).get(10, TimeUnit.SECONDS);
		assertThat(rejected.allowed()).isFalse();
		// cancelled by its caller
		CompletableFuture<RateLimitResult> cancelled = this.waiter.acquireAsync(EXPORT, Duration.ofSeconds(5));
		cancelled.cancel(false);
		// admitted at once
		this.limiter.refund(EXPORT, held);
		assertThat(this.waiter.acquire(EXPORT, Duration.ofSeconds(5)).allowed()).isTrue();
		long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
		while (this.limiter.watchedBuckets() > 0 && System.nanoTime() < deadline) {
			Thread.sleep(10);
		}
		assertThat(this.limiter.watchedBuckets()).isZero();
	}

	@Test
	void anAsynchronousWaiterTriesAgainAsSoonAsThePermitComesBack() throws Exception {
		RateLimitResult held = this.limiter.acquire(EXPORT);
		CompletableFuture<RateLimitResult> waiting = this.waiter.acquireAsync(EXPORT, Duration.ofSeconds(5));
		assertThat(waiting).isNotDone();
		// its retry-after: a second at most
		assertThat(this.scheduler.delaysMicros()).containsExactly(1_000_000L);
		this.limiter.refund(EXPORT, held);
		// woken by the release: the next attempt is due at once
		assertThat(this.scheduler.delaysMicros()).containsExactly(1_000_000L, 0L);
		this.scheduler.release();
		assertThat(waiting.get(10, TimeUnit.SECONDS).allowed()).isTrue();
	}

	@Test
	void aBlockedWaiterIsAdmittedWhenThePermitComesBackBeforeItsRetryAfter() throws Exception {
		RateLimitResult held = this.limiter.acquire(EXPORT);
		ExecutorService thread = Executors.newSingleThreadExecutor();
		try {
			long start = System.nanoTime();
			Future<Long> admittedAfter = thread.submit(() -> {
				assertThat(this.waiter.acquire(EXPORT, Duration.ofSeconds(5)).allowed()).isTrue();
				return System.nanoTime() - start;
			});
			Thread.sleep(100);
			assertThat(admittedAfter).isNotDone();
			this.limiter.refund(EXPORT, held);
			// polling would have tried again only after the retry-after of a second
			assertThat(Duration.ofNanos(admittedAfter.get(10, TimeUnit.SECONDS))).isLessThan(Duration.ofMillis(900));
		}
		finally {
			thread.shutdownNow();
		}
	}

}
