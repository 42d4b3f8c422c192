package io.github.ratelimit.internal.aop;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.KeySource;
import io.github.ratelimit.RateLimitExceededException;
import io.github.ratelimit.RateLimited;
import io.github.ratelimit.internal.core.ManualScheduler;
import io.github.ratelimit.internal.core.RateLimitWaiter;
import io.github.ratelimit.internal.core.RateLimiter;
import io.github.ratelimit.internal.core.RecordingSleeper;
import io.github.ratelimit.internal.memory.InMemoryRateLimitStore;
import io.github.ratelimit.store.contract.MutableClock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

/**
 * {@code @RateLimited(algorithm = CONCURRENCY)} on bean methods: a call holds its permit
 * until it returns, throws, or the future or publisher it returned completes.
 */
class ConcurrencyLimitTests {

	private final MutableClock clock = new MutableClock();

	private final RateLimiter limiter = new RateLimiter(new InMemoryRateLimitStore(this.clock, 1_000));

	private final RateLimitWaiter waiter = new RateLimitWaiter(this.limiter, this.clock, new RecordingSleeper(),
			new ManualScheduler());

	private final Exports exports = LimitedProxies.proxy(new Exports(), this.limiter, this.waiter);

	@AfterEach
	void close() {
		this.waiter.close();
	}

	@Test
	void aCallHoldsItsPermitWhileItRunsAndGivesItBackWhenItReturnsOrThrows() {
		// each call runs another one inside it: the third level finds both permits held
		assertThatExceptionOfType(RateLimitExceededException.class)
			.isThrownBy(() -> this.exports.nested(this.exports, 3))
			.satisfies((ex) -> assertThat(ex.getViolatedLimits()).containsExactly("exports"));
		assertThat(this.exports.nested(this.exports, 2)).isEqualTo("done 2");
		for (int i = 0; i < 5; i++) {
			assertThatIllegalStateException().isThrownBy(() -> this.exports.failing());
		}
		// nothing is left held by the calls that returned or threw
		assertThat(this.exports.nested(this.exports, 2)).isEqualTo("done 2");
	}

	@Test
	void aCompletionStageHoldsItsPermitUntilItCompletes() {
		CompletableFuture<String> first = new CompletableFuture<>();
		CompletableFuture<String> second = new CompletableFuture<>();
		assertThat(this.exports.later(first)).isSameAs(first);
		assertThat(this.exports.later(second)).isSameAs(second);
		CompletableFuture<String> third = new CompletableFuture<>();
		assertThatExceptionOfType(RateLimitExceededException.class).isThrownBy(() -> this.exports.later(third));
		first.complete("one");
		assertThat(this.exports.later(third)).isSameAs(third);
		second.completeExceptionally(new IllegalStateException("failed"));
		third.complete("three");
		CompletableFuture<String> fourth = new CompletableFuture<>();
		CompletableFuture<String> fifth = new CompletableFuture<>();
		this.exports.later(fourth);
		this.exports.later(fifth);
		fourth.complete("four");
		fifth.complete("five");
	}

	@Test
	void aMonoHoldsItsPermitFromSubscriptionUntilItEndsAndWhenCancelledUntilItsLease() {
		Sinks.One<String> first = Sinks.one();
		Sinks.One<String> second = Sinks.one();
		Disposable running = this.exports.reactive(first.asMono()).subscribe();
		Disposable cancelled = this.exports.reactive(second.asMono()).subscribe();
		assertThatExceptionOfType(RateLimitExceededException.class)
			.isThrownBy(() -> this.exports.reactive(Mono.just("third")).block());
		first.tryEmitValue("one");
		assertThat(running.isDisposed()).isTrue();
		assertThat(this.exports.reactive(Mono.just("third")).block()).isEqualTo("third");
		AtomicBoolean failed = new AtomicBoolean();
		this.exports.reactive(Mono.error(new IllegalStateException("failed"))).subscribe(null, (ex) -> failed.set(true));
		assertThat(failed).isTrue();
		// the held call is cancelled: its work may go on, so its permit is held until its lease
		cancelled.dispose();
		this.exports.reactive(Sinks.<String>one().asMono()).subscribe();
		assertThatExceptionOfType(RateLimitExceededException.class)
			.isThrownBy(() -> this.exports.reactive(Mono.just("fourth")).block());
		this.clock.advance(Duration.ofMinutes(10));
		Sinks.One<String> a = Sinks.one();
		Sinks.One<String> b = Sinks.one();
		this.exports.reactive(a.asMono()).subscribe();
		this.exports.reactive(b.asMono()).subscribe();
		assertThatExceptionOfType(RateLimitExceededException.class)
			.isThrownBy(() -> this.exports.reactive(Mono.just("third")).block());
	}

	@Test
	void aMonoCancelledAfterItsValueGivesItsPermitBackOnce() {
		Sinks.One<String> held = Sinks.one();
		this.exports.reactive(held.asMono()).subscribe();
		// take(1) cancels the call after its value: settled by the value, not again by the cancel
		assertThat(Flux.from(this.exports.reactive(Mono.just("once"))).take(1).blockLast()).isEqualTo("once");
		Sinks.One<String> second = Sinks.one();
		this.exports.reactive(second.asMono()).subscribe();
		assertThatExceptionOfType(RateLimitExceededException.class)
			.as("both permits held")
			.isThrownBy(() -> this.exports.reactive(Mono.just("third")).block());
	}

	@Test
	void aFluxHoldsItsPermitUntilItCompletesAndWhenCancelledUntilItsLease() {
		Sinks.Many<String> first = Sinks.many().unicast().onBackpressureBuffer();
		Disposable streaming = this.exports.stream(first.asFlux()).subscribe();
		Disposable other = this.exports.stream(Flux.never()).subscribe();
		assertThatExceptionOfType(RateLimitExceededException.class)
			.isThrownBy(() -> this.exports.stream(Flux.just("x")).blockLast());
		first.tryEmitNext("part");
		assertThatExceptionOfType(RateLimitExceededException.class)
			.as("still streaming")
			.isThrownBy(() -> this.exports.stream(Flux.just("x")).blockLast());
		first.tryEmitComplete();
		assertThat(streaming.isDisposed()).isTrue();
		assertThat(this.exports.stream(Flux.just("x", "y")).collectList().block()).containsExactly("x", "y");
		other.dispose();
		this.exports.stream(Flux.never()).subscribe();
		assertThatExceptionOfType(RateLimitExceededException.class)
			.as("the cancelled stream's work may still run")
			.isThrownBy(() -> this.exports.stream(Flux.just("z")).blockLast());
		this.clock.advance(Duration.ofMinutes(10));
		assertThat(this.exports.stream(Flux.just("z")).blockLast(Duration.ofSeconds(5))).isEqualTo("z");
	}

	@Test
	void aCancelledFutureKeepsItsPermitUntilItsLease() {
		CompletableFuture<String> cancelled = new CompletableFuture<>();
		CompletableFuture<String> running = new CompletableFuture<>();
		this.exports.later(cancelled);
		this.exports.later(running);
		// the caller gives up; whatever completes the future may still be working
		cancelled.cancel(false);
		running.complete("done");
		CompletableFuture<String> next = new CompletableFuture<>();
		assertThat(this.exports.later(next)).isSameAs(next);
		assertThatExceptionOfType(RateLimitExceededException.class)
			.isThrownBy(() -> this.exports.later(new CompletableFuture<>()));
		this.clock.advance(Duration.ofMinutes(10));
		CompletableFuture<String> afterTheLease = new CompletableFuture<>();
		assertThat(this.exports.later(afterTheLease)).isSameAs(afterTheLease);
	}

	@Test
	void anAbandonedPermitExpiresAfterTheLease() {
		CompletableFuture<String> never = new CompletableFuture<>();
		CompletableFuture<String> neverEither = new CompletableFuture<>();
		this.exports.later(never);
		this.exports.later(neverEither);
		assertThatExceptionOfType(RateLimitExceededException.class)
			.isThrownBy(() -> this.exports.later(new CompletableFuture<>()));
		// the lease is the limit's period: ten minutes
		this.clock.advance(Duration.ofMinutes(10));
		CompletableFuture<String> next = new CompletableFuture<>();
		assertThat(this.exports.later(next)).isSameAs(next);
	}

	static class Exports {

		@RateLimited(name = "exports", algorithm = Algorithm.CONCURRENCY, capacity = 2, period = "10m",
				key = KeySource.GLOBAL)
		public String nested(Exports self, int depth) {
			return (depth > 1) ? self.nested(self, depth - 1).replace("done " + (depth - 1), "done " + depth)
					: "done 1";
		}

		@RateLimited(name = "exports", algorithm = Algorithm.CONCURRENCY, capacity = 2, period = "10m",
				key = KeySource.GLOBAL)
		public String failing() {
			throw new IllegalStateException("export failed");
		}

		@RateLimited(name = "later", algorithm = Algorithm.CONCURRENCY, capacity = 2, period = "10m",
				key = KeySource.GLOBAL)
		public CompletableFuture<String> later(CompletableFuture<String> result) {
			return result;
		}

		@RateLimited(name = "reactive", algorithm = Algorithm.CONCURRENCY, capacity = 2, period = "10m",
				key = KeySource.GLOBAL)
		public Mono<String> reactive(Mono<String> result) {
			return result;
		}

		@RateLimited(name = "stream", algorithm = Algorithm.CONCURRENCY, capacity = 2, period = "10m",
				key = KeySource.GLOBAL)
		public Flux<String> stream(Flux<String> result) {
			return result;
		}

	}

}
