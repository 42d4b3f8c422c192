package io.github.ratelimit.internal.aop;

import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;

import org.springframework.security.authentication.UsernamePasswordAuthenticationToken;
import org.springframework.security.core.authority.AuthorityUtils;
import org.springframework.security.core.context.ReactiveSecurityContextHolder;

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

/**
 * {@code @RateLimited} on bean methods returning {@code Mono} or {@code Flux}: decided
 * when subscribed, once per subscription, for the subscriber's principal.
 */
class ReactiveMethodLimitsTests {

	private final MutableClock clock = new MutableClock();

	private final RateLimiter limiter = new RateLimiter(new InMemoryRateLimitStore(this.clock, 1_000));

	private final RateLimitWaiter waiter = new RateLimitWaiter(this.limiter, this.clock, new RecordingSleeper(),
			new ManualScheduler());

	private final Reports target = new Reports();

	private final Reports reports = LimitedProxies.proxy(this.target, this.limiter, this.waiter);

	@AfterEach
	void closeWaiter() {
		this.waiter.close();
	}

	@Test
	void assemblingAPublisherConsumesNothing() {
		for (int i = 0; i < 10; i++) {
			this.reports.monthly();
		}
		assertThat(this.target.runs).hasValue(0);
		StepVerifier.create(this.reports.monthly()).expectNext("monthly").verifyComplete();
		StepVerifier.create(this.reports.monthly()).expectNext("monthly").verifyComplete();
		assertThat(this.target.runs).hasValue(2);
	}

	@Test
	void eachSubscriptionIsOneCallAndARejectionIsSignalledAsAnError() {
		Mono<String> monthly = this.reports.monthly();
		StepVerifier.create(monthly).expectNext("monthly").verifyComplete();
		StepVerifier.create(monthly).expectNext("monthly").verifyComplete();
		StepVerifier.create(monthly).expectError(RateLimitExceededException.class).verify();
		assertThat(this.target.runs).hasValue(2);
	}

	@Test
	void fluxIsLimitedPerSubscription() {
		Flux<String> lines = this.reports.lines();
		StepVerifier.create(lines).expectNext("a", "b").verifyComplete();
		StepVerifier.create(lines).expectError(RateLimitExceededException.class).verify();
	}

	@Test
	void principalComesFromTheSubscribersSecurityContext() {
		StepVerifier.create(this.reports.mine().contextWrite(ReactiveSecurityContextHolder.withAuthentication(user("ann"))))
			.expectNext("mine")
			.verifyComplete();
		StepVerifier.create(this.reports.mine().contextWrite(ReactiveSecurityContextHolder.withAuthentication(user("ann"))))
			.expectError(RateLimitExceededException.class)
			.verify();
		// another principal has a bucket of its own
		StepVerifier.create(this.reports.mine().contextWrite(ReactiveSecurityContextHolder.withAuthentication(user("ben"))))
			.expectNext("mine")
			.verifyComplete();
	}

	private static UsernamePasswordAuthenticationToken user(String name) {
		return UsernamePasswordAuthenticationToken.authenticated(name, "pw", AuthorityUtils.createAuthorityList("ROLE_USER"));
	}

	static class Reports {

		final AtomicInteger runs = new AtomicInteger();

		@RateLimited(capacity = 2, period = "1h", key = KeySource.GLOBAL)
		public Mono<String> monthly() {
			return Mono.fromSupplier(() -> {
				this.runs.incrementAndGet();
				return "monthly";
			});
		}

		@RateLimited(capacity = 1, period = "1h", key = KeySource.GLOBAL)
		public Flux<String> lines() {
			return Flux.just("a", "b");
		}

		@RateLimited(capacity = 1, period = "1h", key = KeySource.PRINCIPAL)
		public Mono<String> mine() {
			return Mono.just("mine");
		}

	}

}
