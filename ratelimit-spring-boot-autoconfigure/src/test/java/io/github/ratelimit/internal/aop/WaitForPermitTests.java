package io.github.ratelimit.internal.aop;

import java.lang.reflect.Method;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import io.github.ratelimit.KeySource;
import io.github.ratelimit.RateLimitExceededException;
import io.github.ratelimit.RateLimited;
import io.github.ratelimit.internal.core.Identities;
import io.github.ratelimit.internal.core.LimitSettings;
import io.github.ratelimit.internal.core.ManualScheduler;
import io.github.ratelimit.internal.core.RateLimitWaiter;
import io.github.ratelimit.internal.core.RateLimiter;
import io.github.ratelimit.internal.core.RecordingSleeper;
import io.github.ratelimit.internal.memory.InMemoryRateLimitStore;
import io.github.ratelimit.internal.pipeline.CallContext;
import io.github.ratelimit.internal.pipeline.DetachedCallContext;
import io.github.ratelimit.store.Acquisition;
import io.github.ratelimit.store.RateLimitResult;
import io.github.ratelimit.store.contract.MutableClock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * {@code @RateLimited(maxWait = ...)} on bean methods, on a controllable clock with a
 * recording sleeper and a scheduler held until the test releases it.
 */
class WaitForPermitTests {

	private static final long INTERVAL = 100_000;

	private final MutableClock clock = new MutableClock();

	private final RateLimiter limiter = new RateLimiter(new InMemoryRateLimitStore(this.clock, 1_000));

	private final RecordingSleeper sleeper = new RecordingSleeper();

	private final ManualScheduler scheduler = new ManualScheduler();

	private final RateLimitWaiter waiter = new RateLimitWaiter(this.limiter, this.clock, this.sleeper, this.scheduler);

	private final HandlerContext handlerContext = new HandlerContext();

	private CallContext context = DetachedCallContext.INSTANCE;

	private final Sender target = new Sender();

	private final Sender sender = LimitedProxies.proxy(this.target,
			Map.of("reports", LimitSettings.builder().maxWait(Duration.ofSeconds(1)).build()),
			this.limiter, this.waiter, () -> this.context);

	@AfterEach
	void close() {
		this.waiter.close();
	}

	@Test
	void callWaitsForItsSlotInsteadOfFailing() {
		this.sender.send("a");
		this.sender.send("b");
		assertThat(this.target.sent).containsExactly("a", "b");
		assertThat(this.sleeper.sleeps()).containsExactly(INTERVAL);
	}

	@Test
	void callThrowsWhenItsSlotIsFurtherAwayThanMaxWaitAndConsumesNothing() {
		this.sender.sendOrGiveUp("a");
		assertThatExceptionOfType(RateLimitExceededException.class).isThrownBy(() -> this.sender.sendOrGiveUp("b"))
			.satisfies((ex) -> assertThat(ex.getRetryAfter()).isEqualTo(Duration.ofMillis(100)))
			.satisfies((ex) -> assertThat(ex.getViolatedLimits()).containsExactly("sms-short"));
		assertThat(this.target.sent).containsExactly("a");
		assertThat(this.sleeper.sleeps()).isEmpty();
		// the rejected call reserved nothing: once the token is back, the next call goes straight through
		this.clock.advanceMicros(INTERVAL);
		this.sender.sendOrGiveUp("c");
		assertThat(this.sleeper.sleeps()).isEmpty();
	}

	@Test
	void asyncMethodReturnsBeforeTheWaitAndIsInvokedOnTheSchedulerAfterIt() throws Exception {
		assertThat(this.sender.sendAsync("a").get()).isEqualTo("a");
		Thread caller = Thread.currentThread();
		assertThat(this.target.threads).containsExactly(caller);
		CompletableFuture<String> second = this.sender.sendAsync("b");
		// the caller is back with a pending future; nobody sleeps, the method has not run
		assertThat(second).isNotDone();
		assertThat(this.target.threads).hasSize(1);
		assertThat(this.sleeper.sleeps()).isEmpty();
		assertThat(this.scheduler.delaysMicros()).containsExactly(INTERVAL);
		this.scheduler.release();
		assertThat(second.get(10, TimeUnit.SECONDS)).isEqualTo("b");
		assertThat(this.target.threads).hasSize(2);
		assertThat(this.target.threads.get(1).getName()).isEqualTo(ManualScheduler.THREAD_NAME);
	}

	@Test
	void cancellingAWaitingAsyncCallGivesItsSlotBackAndNeverInvokesIt() throws Exception {
		this.sender.sendAsync("a").get();
		CompletableFuture<String> second = this.sender.sendAsync("b");
		second.cancel(false);
		CompletableFuture<String> third = this.sender.sendAsync("c");
		assertThat(this.scheduler.delaysMicros()).as("the third call got the cancelled call's slot")
			.containsExactly(INTERVAL, INTERVAL);
		this.scheduler.release();
		assertThat(third.get(10, TimeUnit.SECONDS)).isEqualTo("c");
		assertThat(this.target.asyncSent).containsExactly("a", "c");
	}

	@Test
	void asyncMethodWhoseWaitIsTooLongThrowsAtOnce() throws Exception {
		this.sender.sendAsyncOrGiveUp("a").get();
		assertThatExceptionOfType(RateLimitExceededException.class).isThrownBy(() -> this.sender.sendAsyncOrGiveUp("b"));
		assertThat(this.scheduler.delaysMicros()).isEmpty();
	}

	@Test
	void policyMaxWaitAppliesToAnAnnotationThatSetsNone() {
		this.sender.report("a");
		this.sender.report("b");
		assertThat(this.target.sent).containsExactly("a", "b");
		assertThat(this.sleeper.sleeps()).containsExactly(INTERVAL);
	}

	@Test
	void handlerWaitsOnlyWhenItsOwnAnnotationSetsMaxWait() {
		this.context = this.handlerContext;
		this.sender.report("a");
		// the policy's max-wait alone does not hold a servlet thread
		assertThatExceptionOfType(RateLimitExceededException.class).isThrownBy(() -> this.sender.report("b"));
		assertThat(this.handlerContext.rejections).isEqualTo(1);
		this.sender.send("c");
		this.sender.send("d");
		assertThat(this.target.sent).containsExactly("a", "c", "d");
		assertThat(this.sleeper.sleeps()).containsExactly(INTERVAL);
	}

	/** One token every 100ms for each method. */
	static class Sender {

		final List<String> sent = Collections.synchronizedList(new ArrayList<>());

		final List<String> asyncSent = Collections.synchronizedList(new ArrayList<>());

		final List<Thread> threads = Collections.synchronizedList(new ArrayList<>());

		@RateLimited(name = "sms", capacity = 1, refillTokens = 10, key = KeySource.GLOBAL, maxWait = "1s")
		public void send(String text) {
			this.sent.add(text);
		}

		@RateLimited(name = "sms-short", capacity = 1, refillTokens = 10, key = KeySource.GLOBAL, maxWait = "50ms")
		public void sendOrGiveUp(String text) {
			this.sent.add(text);
		}

		@RateLimited(name = "sms-async", capacity = 1, refillTokens = 10, key = KeySource.GLOBAL, maxWait = "1s")
		public CompletableFuture<String> sendAsync(String text) {
			this.threads.add(Thread.currentThread());
			this.asyncSent.add(text);
			return CompletableFuture.completedFuture(text);
		}

		@RateLimited(name = "sms-async-short", capacity = 1, refillTokens = 10, key = KeySource.GLOBAL,
				maxWait = "50ms")
		public CompletableFuture<String> sendAsyncOrGiveUp(String text) {
			return CompletableFuture.completedFuture(text);
		}

		@RateLimited(name = "reports", capacity = 1, refillTokens = 10, key = KeySource.GLOBAL)
		public void report(String text) {
			this.sent.add(text);
		}

	}

	/** A call running as the handler of a web request. */
	static final class HandlerContext implements CallContext {

		int rejections;

		@Override
		public String handlerRouteName(Method method) {
			return "POST /send";
		}

		@Override
		public String identity(String limit, List<KeySource> keyChain) {
			return Identities.GLOBAL;
		}

		@Override
		public Object request() {
			return null;
		}

		@Override
		public List<Acquisition> takeDeferredAcquisitions() {
			return List.of();
		}

		@Override
		public void allowed(List<Acquisition> acquisitions, RateLimitResult result) {
		}

		@Override
		public void rejected(RateLimitResult result, boolean refundEarlierStages) {
			this.rejections++;
		}

	}

}
