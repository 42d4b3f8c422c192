package io.github.ratelimit.internal.core;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;

import org.junit.jupiter.api.Test;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.internal.memory.InMemoryRateLimitStore;
import io.github.ratelimit.store.Acquisition;
import io.github.ratelimit.store.MutableDecision;
import io.github.ratelimit.store.RateLimit;
import io.github.ratelimit.store.RateLimitDecision;
import io.github.ratelimit.store.RateLimitObserver;
import io.github.ratelimit.store.RateLimitResult;
import io.github.ratelimit.store.RateLimitStore;
import io.github.ratelimit.store.contract.MutableClock;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What an observer learns from the limiter: every decision together with the acquisition
 * it answers, as asked (before places sharing a bucket were merged).
 */
class RateLimiterObserverTests {

	private final MutableClock clock = new MutableClock(MutableClock.DEFAULT_START_MICROS);

	private final RateLimit orders = RateLimit.of("orders", Algorithm.FIXED_WINDOW, 2, Duration.ofMinutes(1));

	private final RateLimit search = RateLimit.of("search", Algorithm.TOKEN_BUCKET, 5, Duration.ofMinutes(1));

	private final List<String> seen = new ArrayList<>();

	private final RateLimiter limiter = new RateLimiter(new InMemoryRateLimitStore(this.clock, 100),
			new RateLimitObserver() {

				@Override
				public void decided(List<Acquisition> acquisitions, RateLimitResult result, long nanos) {
					for (int i = 0; i < acquisitions.size(); i++) {
						RateLimitDecision decision = result.decisions().get(i);
						RateLimiterObserverTests.this.seen.add(acquisitions.get(i).limit().name() + " "
								+ acquisitions.get(i).identity() + " " + (decision.allowed() ? "allowed" : "rejected"));
					}
				}

			});

	@Test
	void observerSeesWhichIdentityEachDecisionIsAbout() {
		this.limiter.acquire(List.of(new Acquisition(this.orders, "user:alice", 2)));
		this.limiter.acquire(List.of(new Acquisition(this.search, "user:bob", 1), new Acquisition(this.orders, "user:alice", 1)));
		assertThat(this.seen).containsExactly("orders user:alice allowed", "search user:bob allowed",
				"orders user:alice rejected");
	}

	@Test
	void observerSeesWhichIdentityASingleAcquisitionDecidedInPlaceIsAbout() {
		MutableDecision into = new MutableDecision();
		this.limiter.acquire(this.orders, "user:carol", 2, 0, into);
		this.limiter.acquire(this.orders, "user:carol", 1, 0, into);
		assertThat(this.seen).containsExactly("orders user:carol allowed", "orders user:carol rejected");
	}

	@Test
	void observerSeesPlacesSharingABucketAsAsked() throws ExecutionException, InterruptedException {
		this.limiter
			.acquireAsync(List.of(new Acquisition(this.orders, "user:alice", 1), new Acquisition(this.orders, "user:alice", 1)), 0)
			.toCompletableFuture()
			.get();
		assertThat(this.seen).containsExactly("orders user:alice allowed", "orders user:alice allowed");
	}

	@Test
	void observerIsToldOfAnAsynchronousDecisionWhenTheStoreAnswers() {
		InMemoryRateLimitStore memory = new InMemoryRateLimitStore(this.clock, 100);
		CompletableFuture<Void> reply = new CompletableFuture<>();
		RateLimitStore remote = new RateLimitStore() {

			@Override
			public RateLimitResult tryAcquire(List<Acquisition> acquisitions, long maxDelayMicros) {
				return memory.tryAcquire(acquisitions, maxDelayMicros);
			}

			@Override
			public CompletionStage<RateLimitResult> tryAcquireAsync(List<Acquisition> acquisitions,
					long maxDelayMicros) {
				return reply.thenApply((ignored) -> memory.tryAcquire(acquisitions, maxDelayMicros));
			}

			@Override
			public void refund(List<Acquisition> acquisitions, RateLimitResult decided) {
				memory.refund(acquisitions, decided);
			}

		};
		List<Integer> told = new ArrayList<>();
		RateLimiter limiter = new RateLimiter(remote, new RateLimitObserver() {

			@Override
			public void decided(List<Acquisition> acquisitions, RateLimitResult result, long nanos) {
				told.add(result.decisions().size());
			}

		});

		CompletableFuture<RateLimitResult> pending = limiter
			.acquireAsync(List.of(new Acquisition(this.orders, "user:dan", 1), new Acquisition(this.orders, "user:dan", 1)),
					0)
			.toCompletableFuture();
		assertThat(told).as("nothing decided yet").isEmpty();
		reply.complete(null);

		// the two places share one bucket, which pays for both at once: one decision for each, as asked
		assertThat(pending.join().decisions()).extracting(RateLimitDecision::allowed).containsExactly(true, true);
		assertThat(memory.inspect(this.orders, "user:dan").remaining()).isZero();
		assertThat(told).containsExactly(2);
	}

	@Test
	void observerImplementingOnlyTheResultIsStillTold() {
		List<RateLimitResult> results = new ArrayList<>();
		RateLimiter limiter = new RateLimiter(new InMemoryRateLimitStore(this.clock, 100), new RateLimitObserver() {

			@Override
			public void decided(RateLimitResult result, long nanos) {
				results.add(result);
			}

		});
		limiter.acquire(List.of(new Acquisition(this.orders, "user:alice", 1)));
		assertThat(results).singleElement().satisfies((result) -> assertThat(result.allowed()).isTrue());
	}

}
