package io.github.ratelimit.internal.aop;

import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import org.springframework.aop.framework.ProxyFactory;

import io.github.ratelimit.KeySource;
import io.github.ratelimit.RateLimited;
import io.github.ratelimit.internal.core.LimitResolver;
import io.github.ratelimit.internal.core.ManualScheduler;
import io.github.ratelimit.internal.core.RateLimitWaiter;
import io.github.ratelimit.internal.core.RateLimiter;
import io.github.ratelimit.internal.core.RecordingSleeper;
import io.github.ratelimit.internal.memory.InMemoryRateLimitStore;
import io.github.ratelimit.internal.pipeline.MethodLimits;
import io.github.ratelimit.internal.pipeline.RateLimitedMethods;
import io.github.ratelimit.store.contract.MutableClock;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The advisor looks its interceptor up once the application's singletons exist, and a call
 * never waits for another thread's look-up: the first calls of a reactive handler run on
 * several event loops at once.
 */
class RateLimitedAdvisorTests {

	private final MutableClock clock = new MutableClock();

	private final RateLimiter limiter = new RateLimiter(new InMemoryRateLimitStore(this.clock, 1_000));

	private final RateLimitWaiter waiter = new RateLimitWaiter(this.limiter, this.clock, new RecordingSleeper(),
			new ManualScheduler());

	private final RateLimitedMethods methods = new RateLimitedMethods();

	private final RateLimitedMethodInterceptor interceptor = RateLimitedMethodInterceptor
		.builder(new MethodLimits(this.methods, new LimitResolver(Map.of(), List.of(KeySource.GLOBAL))),
				this.limiter, this.waiter)
		.build();

	@AfterEach
	void close() {
		this.waiter.close();
	}

	@Test
	void looksTheInterceptorUpOnceEverySingletonExists() {
		AtomicInteger lookUps = new AtomicInteger();
		RateLimitedAdvisor advisor = new RateLimitedAdvisor(this.methods, () -> {
			lookUps.incrementAndGet();
			return this.interceptor;
		});
		Greeter greeter = proxy(advisor);
		assertThat(lookUps).hasValue(0);
		advisor.afterSingletonsInstantiated();
		assertThat(lookUps).hasValue(1);
		assertThat(greeter.greet()).isEqualTo("hello");
		assertThat(greeter.greet()).isEqualTo("hello");
		assertThat(lookUps).hasValue(1);
	}

	@Test
	void aCallNeverWaitsForAnotherThreadsLookUp() throws Exception {
		CountDownLatch firstLookUpStarted = new CountDownLatch(1);
		CountDownLatch releaseFirstLookUp = new CountDownLatch(1);
		AtomicInteger lookUps = new AtomicInteger();
		Supplier<RateLimitedMethodInterceptor> slowFirstLookUp = () -> {
			if (lookUps.incrementAndGet() == 1) {
				firstLookUpStarted.countDown();
				try {
					releaseFirstLookUp.await(30, TimeUnit.SECONDS);
				}
				catch (InterruptedException ex) {
					Thread.currentThread().interrupt();
				}
			}
			return this.interceptor;
		};
		RateLimitedAdvisor advisor = new RateLimitedAdvisor(this.methods, slowFirstLookUp);
		Greeter greeter = proxy(advisor);
		CompletableFuture<String> first = CompletableFuture.supplyAsync(greeter::greet);
		try {
			assertThat(firstLookUpStarted.await(30, TimeUnit.SECONDS)).isTrue();
			// the first call is still looking the interceptor up; this one does not wait for it
			String second = CompletableFuture.supplyAsync(greeter::greet).get(30, TimeUnit.SECONDS);
			assertThat(second).isEqualTo("hello");
			assertThat(first).isNotDone();
		}
		finally {
			releaseFirstLookUp.countDown();
		}
		assertThat(first.get(30, TimeUnit.SECONDS)).isEqualTo("hello");
	}

	private static Greeter proxy(RateLimitedAdvisor advisor) {
		ProxyFactory factory = new ProxyFactory(new Greeter());
		factory.setProxyTargetClass(true);
		factory.addAdvisor(advisor);
		return (Greeter) factory.getProxy();
	}

	static class Greeter {

		@RateLimited(name = "greetings", capacity = 100, period = "1m")
		String greet() {
			return "hello";
		}

	}

}
