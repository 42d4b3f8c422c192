package io.github.ratelimit.internal.aop;

import java.lang.reflect.Method;
import java.util.concurrent.CompletableFuture;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;

import io.github.ratelimit.KeySource;
import io.github.ratelimit.RateLimitConfigurationException;
import io.github.ratelimit.RateLimitExceededException;
import io.github.ratelimit.RateLimited;
import io.github.ratelimit.internal.core.ManualScheduler;
import io.github.ratelimit.internal.core.RateLimitWaiter;
import io.github.ratelimit.internal.core.RateLimiter;
import io.github.ratelimit.internal.core.RecordingSleeper;
import io.github.ratelimit.internal.memory.InMemoryRateLimitStore;
import io.github.ratelimit.internal.pipeline.RateLimitedMethods;
import io.github.ratelimit.store.contract.MutableClock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

/**
 * {@code @RateLimited(countExceptions = ..., countWhen = ...)} on bean methods: the
 * permit is taken before the call and given back after it when its outcome does not
 * count.
 */
class CountByOutcomeTests {

	private final MutableClock clock = new MutableClock();

	private final RateLimiter limiter = new RateLimiter(new InMemoryRateLimitStore(this.clock, 1_000));

	private final RateLimitWaiter waiter = new RateLimitWaiter(this.limiter, this.clock, new RecordingSleeper(),
			new ManualScheduler());

	private final Accounts target = new Accounts();

	private final Accounts accounts = LimitedProxies.proxy(this.target, this.limiter, this.waiter);

	@AfterEach
	void close() {
		this.waiter.close();
	}

	@Test
	void countsOnlyCallsThatThrowTheNamedException() {
		for (int i = 0; i < 20; i++) {
			assertThat(this.accounts.signIn("right")).isEqualTo("welcome");
		}
		// another exception is not a failed login: given back
		for (int i = 0; i < 5; i++) {
			assertThatIllegalStateException().isThrownBy(() -> this.accounts.signIn("database-down"));
		}
		for (int i = 0; i < 3; i++) {
			assertThatExceptionOfType(BadCredentials.class).isThrownBy(() -> this.accounts.signIn("wrong"));
		}
		assertThatExceptionOfType(RateLimitExceededException.class).isThrownBy(() -> this.accounts.signIn("right"))
			.satisfies((ex) -> assertThat(ex.getViolatedLimits()).containsExactly("sign-ins"));
		assertThat(this.target.checks).isEqualTo(28);
	}

	@Test
	void countsCallsThatThrowAnythingWhenThrowableIsNamed() {
		assertThat(this.accounts.fetch(true)).isEqualTo("fetched");
		assertThat(this.accounts.fetch(true)).isEqualTo("fetched");
		assertThatIllegalStateException().isThrownBy(() -> this.accounts.fetch(false));
		assertThatIllegalStateException().isThrownBy(() -> this.accounts.fetch(false));
		assertThatExceptionOfType(RateLimitExceededException.class).isThrownBy(() -> this.accounts.fetch(true));
	}

	@Test
	void countsByAConditionOverTheResult() {
		for (int i = 0; i < 10; i++) {
			assertThat(this.accounts.verify("alice", "right")).isTrue();
		}
		assertThat(this.accounts.verify("alice", "wrong")).isFalse();
		assertThat(this.accounts.verify("alice", "wrong")).isFalse();
		assertThatExceptionOfType(RateLimitExceededException.class)
			.isThrownBy(() -> this.accounts.verify("alice", "right"));
		// the condition's identity is the username: bob is apart
		assertThat(this.accounts.verify("bob", "right")).isTrue();
	}

	@Test
	void aConditionOverTheResultDoesNotCountThrownExceptions() {
		for (int i = 0; i < 5; i++) {
			assertThatIllegalStateException().isThrownBy(() -> this.accounts.verify("carol", "database-down"));
		}
		assertThat(this.accounts.verify("carol", "right")).isTrue();
	}

	@Test
	void completionStageCountsWhenItCompletes() {
		CompletableFuture<Boolean> first = this.accounts.verifyLater("wrong");
		assertThat(first.join()).isFalse();
		for (int i = 0; i < 5; i++) {
			assertThat(this.accounts.verifyLater("right").join()).isTrue();
		}
		assertThat(this.accounts.verifyLater("wrong").join()).isFalse();
		assertThatExceptionOfType(RateLimitExceededException.class).isThrownBy(() -> this.accounts.verifyLater("right"));
	}

	@Test
	void monoCountsByTheValueItEmits() {
		for (int i = 0; i < 5; i++) {
			assertThat(this.accounts.verifyReactively("right").block()).isTrue();
		}
		assertThat(this.accounts.verifyReactively("wrong").block()).isFalse();
		assertThat(this.accounts.verifyReactively("wrong").block()).isFalse();
		assertThatExceptionOfType(RateLimitExceededException.class)
			.isThrownBy(() -> this.accounts.verifyReactively("right").block());
	}

	@Test
	void aMonoCancelledBeforeItsOutcomeCounts() {
		Sinks.One<Boolean> check = Sinks.one();
		this.accounts.checkReactively(check.asMono()).subscribe().dispose();
		this.accounts.checkReactively(check.asMono()).subscribe().dispose();
		// the outcome would not have counted, but it is never known: the cancelled calls count
		check.tryEmitValue(true);
		assertThatExceptionOfType(RateLimitExceededException.class)
			.isThrownBy(() -> this.accounts.checkReactively(Mono.just(true)).block());
	}

	@Test
	void invalidConditionFailsNamingTheMethod() throws Exception {
		Method call = Broken.class.getMethod("call");
		assertThatExceptionOfType(RateLimitConfigurationException.class)
			.isThrownBy(() -> new RateLimitedMethods().find(call, Broken.class))
			.withMessageContaining("Broken.call() (countWhen)");
	}

	@Test
	void invalidStatusFailsNamingTheMethod() throws Exception {
		Method call = BadStatus.class.getMethod("call");
		assertThatExceptionOfType(RateLimitConfigurationException.class)
			.isThrownBy(() -> new RateLimitedMethods().find(call, BadStatus.class))
			.withMessageContaining("BadStatus.call() (countStatuses)")
			.withMessageContaining("'7xx'");
	}

	/** A failed login. */
	static class BadCredentials extends RuntimeException {

	}

	static class Accounts {

		int checks;

		@RateLimited(name = "sign-ins", capacity = 3, period = "15m", key = KeySource.GLOBAL,
				countExceptions = BadCredentials.class)
		public String signIn(String password) {
			this.checks++;
			if ("database-down".equals(password)) {
				throw new IllegalStateException("database down");
			}
			if (!"right".equals(password)) {
				throw new BadCredentials();
			}
			return "welcome";
		}

		@RateLimited(name = "fetches", capacity = 2, period = "15m", key = KeySource.GLOBAL,
				countExceptions = Throwable.class)
		public String fetch(boolean works) {
			if (!works) {
				throw new IllegalStateException("failed");
			}
			return "fetched";
		}

		@RateLimited(name = "verifications", capacity = 2, period = "15m", keyExpression = "#username",
				countWhen = "#result == false")
		public boolean verify(String username, String password) {
			if ("database-down".equals(password)) {
				throw new IllegalStateException("database down");
			}
			return "right".equals(password);
		}

		@RateLimited(name = "later", capacity = 2, period = "15m", key = KeySource.GLOBAL, countWhen = "!#result")
		public CompletableFuture<Boolean> verifyLater(String password) {
			return CompletableFuture.completedFuture("right".equals(password));
		}

		@RateLimited(name = "reactive", capacity = 2, period = "15m", key = KeySource.GLOBAL,
				countWhen = "#result == false")
		public Mono<Boolean> verifyReactively(String password) {
			return Mono.fromSupplier(() -> "right".equals(password));
		}

		@RateLimited(name = "reactive-checks", capacity = 2, period = "15m", key = KeySource.GLOBAL,
				countWhen = "#result == false")
		public Mono<Boolean> checkReactively(Mono<Boolean> check) {
			return check;
		}

	}

	static class Broken {

		@RateLimited(capacity = 2, key = KeySource.GLOBAL, countWhen = "#result ==")
		public void call() {
		}

	}

	static class BadStatus {

		@RateLimited(capacity = 2, key = KeySource.GLOBAL, countStatuses = { "401", "7xx" })
		public void call() {
		}

	}

}
