package io.github.ratelimit.store.contract;

import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;

import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.CalendarPeriod;
import io.github.ratelimit.internal.core.RateLimiter;
import io.github.ratelimit.store.Acquisition;
import io.github.ratelimit.store.BucketSnapshot;
import io.github.ratelimit.store.RateLimit;
import io.github.ratelimit.store.RateLimitDecision;
import io.github.ratelimit.store.RateLimitResult;
import io.github.ratelimit.store.RateLimitStore;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Reserve, then settle, under concurrency: {@value #CALLERS} callers spread over the
 * store's instances each reserve an estimated cost on three limits at once (requests, the
 * tokens being limited, a daily budget), all-or-nothing, and settle the actual cost
 * once their call ends. The clock stands still while they run (or moves by far less than
 * a unit's refill), so the arithmetic is exact:
 * <ul>
 * <li>with estimates that are upper bounds (the way {@code max_tokens} is), the tokens
 * used never exceed the limit, not by one;</li>
 * <li>with estimates that a call may exceed, the tokens used exceed the limit by at most
 * what the calls in flight at the last admission used beyond their estimates: at most
 * {@value #CALLERS} × (largest actual cost − estimate);</li>
 * <li>afterwards nothing is left reserved: every limit holds exactly its capacity less
 * what was settled, a debt shows as nothing remaining and a wait that counts it, and
 * giving the debt back plus one unit leaves exactly one unit.</li>
 * </ul>
 * A store test extends this class and builds its instances on the given clock: one store
 * called from every thread, or several instances (each with its own connection) sharing
 * one state, as the instances of an application share Redis.
 */
public abstract class SettleUnderConcurrencyTests {

	/** Callers running at once, across every instance. */
	protected static final int CALLERS = 64;

	/** Calls each caller makes: together about twice what the tokens limit lets through. */
	private static final int CALLS_PER_CALLER = 12;

	/** Tokens each call reserves before it starts. */
	protected static final long ESTIMATE = 100;

	/** Tokens the calls may use together; the limit that runs out. */
	private static final long TOKENS = 20_000;

	/** Requests allowed: more than are ever made, so every call pays one exactly. */
	private static final long REQUESTS = 2_000;

	/** A daily budget no run reaches, which must count every token settled. */
	private static final long BUDGET = 100_000;

	/** Every eighth call uses exactly its estimate, which needs no settling at all. */
	private static final int EXACT_EVERY = 8;

	/** The middle of a day and of an hour, in UTC and in Berlin: no window ends while a test runs. */
	private static final long START = TimeUnit.SECONDS.toMicros(Instant.parse("2026-11-15T10:20:00Z").getEpochSecond());

	private static final String TENANT = "tenant";

	/** A token bucket that refills one unit an hour: no unit comes back during a test. */
	private static final Duration SLOW_REFILL_PER_UNIT = Duration.ofHours(1);

	private final MutableClock clock = new MutableClock(START);

	private List<RateLimitStore> instances = List.of();

	/**
	 * Creates the instances the callers are spread over, deciding at the time of
	 * {@code clock}; they share one state.
	 * @param clock the clock every instance must read the time from
	 * @return one store, or several sharing their buckets
	 */
	protected abstract List<RateLimitStore> createInstances(MutableClock clock);

	/**
	 * The store the state is read from after a run, and a debt given back through.
	 * @param instances the instances {@link #createInstances} made
	 * @return by default the first instance
	 */
	protected RateLimitStore sharedState(List<RateLimitStore> instances) {
		return instances.get(0);
	}

	/**
	 * Runs once every instance has decided and settled a call of another identity, just
	 * before the callers start: a remote store has its connections open and its scripts
	 * loaded by then. The default does nothing.
	 */
	protected void beforeCalling() {
	}

	/**
	 * Runs on the test thread while the callers call, until {@code running} answers
	 * {@code false}: instances that sync with a shared store do it here. The default does
	 * nothing.
	 * @param clock the clock of the instances
	 * @param running whether callers are still calling
	 */
	protected void whileCalling(MutableClock clock, BooleanSupplier running) {
	}

	/**
	 * Runs once the callers are done and before the state is read: instances holding
	 * units of their own give them back here. The default does nothing.
	 * @param clock the clock of the instances
	 */
	protected void afterCalling(MutableClock clock) {
	}

	/**
	 * Whether only the limit that ran out refuses calls. An instance deciding from shares
	 * of the limits may also refuse a call when its share of another limit is empty until
	 * its next sync, which leaves the accounting as exact; it answers {@code false}.
	 * @return {@code true} by default
	 */
	protected boolean refusesOnlyWhatRanOut() {
		return true;
	}

	/**
	 * Told how many calls were made and how many of them settled a cost other than the
	 * estimate, once the state is read: a remote store checks its round trips here. The
	 * default does nothing.
	 * @param calls calls made (admitted or not)
	 * @param settlements calls settled at a cost other than their estimate
	 */
	protected void calledStore(long calls, long settlements) {
	}

	/**
	 * Closes what {@link #createInstances} made. The default closes every instance that is
	 * {@link AutoCloseable}.
	 * @param instances the instances
	 * @throws Exception when closing fails
	 */
	protected void closeInstances(List<RateLimitStore> instances) throws Exception {
		for (RateLimitStore instance : instances) {
			if (instance instanceof AutoCloseable closeable) {
				closeable.close();
			}
		}
	}

	@AfterEach
	void close() throws Exception {
		closeInstances(this.instances);
	}

	/** The tokens limit of a run, of each kind a budget comes in. */
	enum TokensLimit {

		/** A bucket refilling one token an hour. */
		TOKEN_BUCKET,

		/** An hour's window. */
		FIXED_WINDOW,

		/** A calendar day in UTC. */
		CALENDAR_DAY;

		RateLimit limit() {
			return switch (this) {
				case TOKEN_BUCKET -> RateLimit.of("tokens", Algorithm.TOKEN_BUCKET, TOKENS,
						SLOW_REFILL_PER_UNIT.multipliedBy(TOKENS));
				case FIXED_WINDOW -> RateLimit.of("tokens", Algorithm.FIXED_WINDOW, TOKENS, Duration.ofHours(1));
				case CALENDAR_DAY -> RateLimit.calendar("tokens", TOKENS, CalendarPeriod.DAY, ZoneId.of("UTC"));
			};
		}

	}

	@ParameterizedTest
	@EnumSource(TokensLimit.class)
	void estimatesThatAreUpperBoundsNeverLetUsageExceedTheLimit(TokensLimit kind) throws Exception {
		Run run = run(kind, (random) -> random.nextLong(ESTIMATE + 1));
		assertThat(run.tokens).as("tokens used of %d: %s", TOKENS, run).isLessThanOrEqualTo(TOKENS);
		assertNothingLeftReserved(kind, run);
	}

	@ParameterizedTest
	@EnumSource(TokensLimit.class)
	void estimatesThatCallsExceedOvershootAtMostWhatTheCallsInFlightExceedThemBy(TokensLimit kind)
			throws Exception {
		// around the estimate: half of it to one and a half times it
		Run run = run(kind, (random) -> ESTIMATE / 2 + random.nextLong(ESTIMATE + 1));
		long bound = CALLERS * (ESTIMATE * 3 / 2 - ESTIMATE);
		assertThat(run.tokens - TOKENS).as("overshoot, bound %d: %s", bound, run).isLessThanOrEqualTo(bound);
		assertNothingLeftReserved(kind, run);
	}

	/** Every limit holds its capacity less exactly what was settled. */
	private void assertNothingLeftReserved(TokensLimit kind, Run run) {
		RateLimitStore store = sharedState(this.instances);
		// time may have moved (syncs), by far less than a token bucket's unit
		long elapsed = this.clock.nowMicros() - START;
		assertThat(elapsed).isLessThan(SLOW_REFILL_PER_UNIT.toNanos() / 1_000);
		if (refusesOnlyWhatRanOut()) {
			assertThat(run.rejectedBy).as("only the tokens run out").containsOnly("tokens");
		}
		else {
			assertThat(run.rejectedBy).as("the tokens run out").contains("tokens");
		}
		assertThat(run.rejected.get()).as("calls refused: the limit was reached").isPositive();
		assertThat(store.inspect(run.requests, TENANT).remaining()).as("requests left: %s", run)
			.isEqualTo(REQUESTS - run.admitted.get());
		assertThat(store.inspect(run.budget, TENANT).remaining()).as("budget left: %s", run)
			.isEqualTo(BUDGET - run.tokens);
		BucketSnapshot tokens = store.inspect(run.tokensLimit, TENANT);
		if (run.tokens < TOKENS) {
			assertThat(tokens.remaining()).as("tokens left: %s", run).isEqualTo(TOKENS - run.tokens);
			return;
		}
		long debt = run.tokens - TOKENS;
		assertThat(tokens.remaining()).as("tokens left in debt: %s", run).isZero();
		if (kind == TokensLimit.TOKEN_BUCKET) {
			// the debt and one more token refill before a request of one fits, less what
			// refilled since the bucket was first used (at most the time elapsed)
			long refill = (debt + 1) * run.tokensLimit.emissionIntervalMicros();
			assertThat(tokens.retryAfterMicros()).as("wait in debt of %d: %s", debt, run)
				.isBetween(refill - elapsed, refill);
		}
		else {
			// a window carries its debt until it ends
			long now = this.clock.nowMicros();
			assertThat(tokens.retryAfterMicros()).as("wait in debt of %d: %s", debt, run)
				.isEqualTo(run.tokensLimit.windowEndMicros(run.tokensLimit.windowStartMicros(now)) - now);
		}
		// giving back the debt and one unit more leaves exactly that unit: the debt was exact
		store.settle(List.of(new Acquisition(run.tokensLimit, TENANT, debt + 1)), run.lastAdmitted.get(),
				new long[] { 0 });
		assertThat(store.inspect(run.tokensLimit, TENANT).remaining()).as("left after the debt came back: %s", run)
			.isEqualTo(1);
	}

	/** Draws a call's actual cost. */
	@FunctionalInterface
	private interface ActualCost {

		long draw(SplittableRandom random);

	}

	private Run run(TokensLimit kind, ActualCost actualCost) throws Exception {
		this.instances = createInstances(this.clock);
		List<RateLimiter> limiters = this.instances.stream().map(RateLimiter::new).toList();
		Run run = new Run(kind.limit());
		for (RateLimiter limiter : limiters) {
			warmUp(limiter, run.reserved);
		}
		beforeCalling();
		ExecutorService callers = Executors.newFixedThreadPool(CALLERS);
		CountDownLatch start = new CountDownLatch(1);
		CountDownLatch done = new CountDownLatch(CALLERS);
		// every other call, each caller holds its reservation until all have reserved: the
		// most calls in flight at once, the case the bound is about
		CyclicBarrier held = new CyclicBarrier(CALLERS);
		try {
			List<Future<?>> calls = new ArrayList<>();
			for (int c = 0; c < CALLERS; c++) {
				RateLimiter limiter = limiters.get(c % limiters.size());
				SplittableRandom random = new SplittableRandom(c);
				boolean async = (c / limiters.size()) % 2 == 1;
				calls.add(callers.submit(() -> {
					try {
						start.await();
						for (int i = 0; i < CALLS_PER_CALLER; i++) {
							long actual = (i % EXACT_EVERY == EXACT_EVERY - 1) ? ESTIMATE : actualCost.draw(random);
							run.call(limiter, actual, async, (i % 2 == 1) ? held : null);
						}
					}
					finally {
						done.countDown();
					}
					return null;
				}));
			}
			start.countDown();
			whileCalling(this.clock, () -> done.getCount() > 0);
			for (Future<?> call : calls) {
				call.get(120, TimeUnit.SECONDS);
			}
		}
		finally {
			callers.shutdownNow();
			assertThat(callers.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
		}
		run.tokens = run.used.get();
		afterCalling(this.clock);
		calledStore((long) CALLERS * CALLS_PER_CALLER, run.settled.get());
		return run;
	}

	/**
	 * Decides and settles a call of another identity: a remote store opens its connection
	 * and loads its scripts. On a loaded machine a first connection may take longer than
	 * the store waits; the warm-up measures nothing, so it tries again a few times.
	 */
	private static void warmUp(RateLimiter limiter, List<Acquisition> reserved) {
		List<Acquisition> warmUp = reserved.stream()
			.map((acquisition) -> new Acquisition(acquisition.limit(), "warm-up", acquisition.cost()))
			.toList();
		for (int attempt = 1;; attempt++) {
			try {
				RateLimitResult decided = limiter.acquire(warmUp);
				assertThat(decided.allowed()).isTrue();
				limiter.settle(warmUp, decided, new long[] { 1, 1, 1 });
				return;
			}
			catch (RuntimeException ex) {
				if (attempt == 5) {
					throw ex;
				}
			}
		}
	}

	/** What the callers of one run did. */
	private static final class Run {

		final RateLimit requests = RateLimit.of("requests", Algorithm.TOKEN_BUCKET, REQUESTS,
				SLOW_REFILL_PER_UNIT.multipliedBy(REQUESTS));

		final RateLimit tokensLimit;

		final RateLimit budget = RateLimit.calendar("budget", BUDGET, CalendarPeriod.DAY,
				ZoneId.of("Europe/Berlin"));

		final List<Acquisition> reserved;

		final AtomicLong admitted = new AtomicLong();

		final AtomicLong rejected = new AtomicLong();

		final AtomicLong settled = new AtomicLong();

		final AtomicLong used = new AtomicLong();

		final AtomicInteger inFlight = new AtomicInteger();

		final AtomicInteger mostInFlight = new AtomicInteger();

		final Set<String> rejectedBy = ConcurrentHashMap.newKeySet();

		final AtomicReference<RateLimitResult> lastAdmitted = new AtomicReference<>();

		long tokens;

		Run(RateLimit tokensLimit) {
			this.tokensLimit = tokensLimit;
			this.reserved = List.of(new Acquisition(this.requests, TENANT, 1),
					new Acquisition(tokensLimit, TENANT, ESTIMATE), new Acquisition(this.budget, TENANT, ESTIMATE));
		}

		/**
		 * Reserves, and settles at {@code actual} when admitted; with a barrier, once every
		 * caller has reserved.
		 */
		void call(RateLimiter limiter, long actual, boolean async, @Nullable CyclicBarrier held) throws Exception {
			int now = this.inFlight.incrementAndGet();
			this.mostInFlight.accumulateAndGet(now, Math::max);
			try {
				RateLimitResult decided = limiter.acquire(this.reserved);
				if (held != null) {
					held.await(60, TimeUnit.SECONDS);
				}
				if (!decided.allowed()) {
					this.rejected.incrementAndGet();
					for (RateLimitDecision rejection : decided.rejections()) {
						this.rejectedBy.add(rejection.limit().name());
					}
					return;
				}
				this.admitted.incrementAndGet();
				this.lastAdmitted.set(decided);
				long[] actualCosts = { 1, actual, actual };
				if (async) {
					limiter.settleAsync(this.reserved, decided, actualCosts).toCompletableFuture().get(60, TimeUnit.SECONDS);
				}
				else {
					limiter.settle(this.reserved, decided, actualCosts);
				}
				this.used.addAndGet(actual);
				if (actual != ESTIMATE) {
					this.settled.incrementAndGet();
				}
			}
			finally {
				this.inFlight.decrementAndGet();
			}
		}

		@Override
		public String toString() {
			return "admitted " + this.admitted + ", refused " + this.rejected + ", tokens used " + this.used
					+ ", most calls in flight " + this.mostInFlight;
		}

	}

}
