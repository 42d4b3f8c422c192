package io.github.ratelimit.internal.aop;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import io.github.ratelimit.RateLimitExceededException;
import io.github.ratelimit.RateLimitUsage;
import io.github.ratelimit.RateLimited;
import io.github.ratelimit.internal.core.Identities;
import io.github.ratelimit.internal.core.ManualScheduler;
import io.github.ratelimit.internal.core.RateLimitWaiter;
import io.github.ratelimit.internal.core.RateLimiter;
import io.github.ratelimit.internal.core.RecordingSleeper;
import io.github.ratelimit.internal.memory.InMemoryRateLimitStore;
import io.github.ratelimit.store.RateLimit;
import io.github.ratelimit.store.contract.MutableClock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

/**
 * Bean methods whose limits reserve an estimate when the call starts and settle the
 * actual cost when it ends: from {@code actualCost} over the result, or from what the call
 * reports to its {@link RateLimitUsage}; an overdraft is debt the next calls wait out.
 */
class SettledCostTests {

	private static final RateLimit TOKENS = new RateLimit("tokens", io.github.ratelimit.Algorithm.TOKEN_BUCKET, 100,
			100, Duration.ofMinutes(1));

	private final MutableClock clock = new MutableClock();

	private final InMemoryRateLimitStore store = new InMemoryRateLimitStore(this.clock, 1_000);

	private final RateLimiter limiter = new RateLimiter(this.store);

	private final RateLimitWaiter waiter = new RateLimitWaiter(this.limiter, this.clock, new RecordingSleeper(),
			new ManualScheduler());

	private final Models models = LimitedProxies.proxy(new Models(), this.limiter, this.waiter);

	@AfterEach
	void close() {
		this.waiter.close();
	}

	@Test
	void givesBackWhatTheResultSaysWasNotUsed() {
		assertThat(this.models.complete(60, 10).tokens()).isEqualTo(10);
		assertThat(remaining()).isEqualTo(90);
		// without the settlement 40 would be left, too few for this estimate
		assertThat(this.models.complete(90, 90).tokens()).isEqualTo(90);
		assertThat(remaining()).isZero();
	}

	@Test
	void anActualCostBeyondWhatIsLeftIsDebtTheNextCallsWaitOut() {
		this.models.complete(10, 250);
		assertThat(remaining()).isZero();
		assertThatExceptionOfType(RateLimitExceededException.class).isThrownBy(() -> this.models.complete(1, 1));
		// 150 owed: a minute's refill of 100 still leaves 50 owed
		this.clock.advance(Duration.ofMinutes(1));
		assertThatExceptionOfType(RateLimitExceededException.class).isThrownBy(() -> this.models.complete(1, 1));
		this.clock.advance(Duration.ofSeconds(60));
		assertThat(this.models.complete(50, 50).tokens()).isEqualTo(50);
	}

	@Test
	void aReportedCostWinsOverTheResult() {
		this.models.completeAndReport(60, 10, 30);
		assertThat(remaining()).isEqualTo(70);
	}

	@Test
	void aCallWithoutActualCostSettlesWhatItReportsAndOtherwiseKeepsItsReservation() {
		this.models.reportOnly(40, 5);
		assertThat(remaining()).isEqualTo(95);
		this.models.reportOnly(40, -1);
		assertThat(remaining()).isEqualTo(55);
	}

	@Test
	void aCallThatThrowsSettlesWhatItReportedElseKeepsItsReservation() {
		assertThatIllegalStateException().isThrownBy(() -> this.models.failAfterReporting(50, 5));
		assertThat(remaining()).isEqualTo(95);
		assertThatIllegalStateException().isThrownBy(() -> this.models.failAfterReporting(50, -1));
		assertThat(remaining()).isEqualTo(45);
	}

	@Test
	void failedCallsThatReportedNothingGiveTheirReservationBackWhenConfiguredTo() {
		Models givingBack = LimitedProxies.proxyGivingFailedReservationsBack(new Models(), this.limiter, this.waiter);
		assertThatIllegalStateException().isThrownBy(() -> givingBack.failAfterReporting(50, -1));
		assertThat(remaining()).isEqualTo(100);
		assertThatIllegalStateException().isThrownBy(() -> givingBack.streamAndFail(40).collectList().block());
		assertThat(remaining()).isEqualTo(100);
		// what a failed call reported is settled whatever the setting
		assertThatIllegalStateException().isThrownBy(() -> givingBack.failAfterReporting(50, 5));
		assertThat(remaining()).isEqualTo(95);
	}

	@Test
	void onlyTheLimitsThatSettleAreSettled() {
		for (int i = 0; i < 3; i++) {
			this.models.chat(50, 1);
		}
		assertThat(remaining()).isEqualTo(97);
		// the requests limit counted every call at its cost of 1
		assertThatExceptionOfType(RateLimitExceededException.class).isThrownBy(() -> this.models.chat(1, 1))
			.satisfies((ex) -> assertThat(ex.getViolatedLimits()).containsExactly("requests"));
	}

	@Test
	void aNestedCallReportsToItsOwnUsage() {
		this.models.outer(this.models);
		// the inner call reported 7 for itself, the outer call 20
		assertThat(remaining()).isEqualTo(100 - 7 - 20);
	}

	@Test
	void aCompletionStageSettlesWhenItCompletes() {
		CompletableFuture<Usage> answer = this.models.completeLater(80, 15);
		assertThat(answer.join().tokens()).isEqualTo(15);
		assertThat(remaining()).isEqualTo(85);
	}

	@Test
	void aMonoSettlesTheValueItEmits() {
		assertThat(this.models.completeReactively(80, 25).block().tokens()).isEqualTo(25);
		assertThat(remaining()).isEqualTo(75);
	}

	@Test
	void aMonoReportsToTheUsageInItsContext() {
		assertThat(this.models.reportReactively(80, 12).block()).isEqualTo("done");
		assertThat(remaining()).isEqualTo(88);
	}

	@Test
	void aFluxSettlesTheLastElementItEmitsWhenItCompletes() {
		// the final chunk carries the usage, as a streamed chat completion's does
		assertThat(this.models.stream(80, 4, 30).collectList().block()).hasSize(4);
		assertThat(remaining()).isEqualTo(70);
	}

	@Test
	void aFluxSettlesWhatItReportedWhileItStreamed() {
		assertThat(this.models.streamAndReport(80, 5, 3).collectList().block()).hasSize(5);
		assertThat(remaining()).isEqualTo(85);
	}

	@Test
	void aCancelledFluxSettlesWhatItReportedSoFar() {
		// 3 per element, reported as each is emitted: the subscriber takes 2 of up to 50
		assertThat(this.models.streamAndReport(80, 50, 3).take(2).collectList().block()).hasSize(2);
		assertThat(remaining()).isEqualTo(94);
	}

	@Test
	void aFailedFluxThatReportedNothingKeepsItsReservation() {
		assertThatIllegalStateException().isThrownBy(() -> this.models.streamAndFail(40).collectList().block());
		assertThat(remaining()).isEqualTo(60);
	}

	@Test
	void whenTheOutcomeDoesNotCountTheRefundWins() {
		assertThat(this.models.countedWhenAnswered(60, false)).isFalse();
		assertThat(remaining()).isEqualTo(100);
		assertThat(this.models.countedWhenAnswered(60, true)).isTrue();
		assertThat(remaining()).isEqualTo(90);
	}

	@Test
	void usageOutsideALimitedCallGoesNowhere() {
		RateLimitUsage.current().report(1_000);
		assertThat(this.models.complete(100, 100).tokens()).isEqualTo(100);
	}

	private long remaining() {
		return this.store.inspect(TOKENS, Identities.GLOBAL).remaining();
	}

	record Usage(long tokens) {
	}

	static class Models {

		@RateLimited(name = "tokens", capacity = 100, period = "1m", estimate = "#maxTokens",
				actualCost = "#result.tokens")
		public Usage complete(long maxTokens, long used) {
			return new Usage(used);
		}

		@RateLimited(name = "tokens", capacity = 100, period = "1m", estimate = "#maxTokens",
				actualCost = "#result.tokens")
		public Usage completeAndReport(long maxTokens, long used, long reported) {
			RateLimitUsage.current().report(reported);
			return new Usage(used);
		}

		@RateLimited(name = "tokens", capacity = 100, period = "1m", estimate = "#maxTokens")
		public void reportOnly(long maxTokens, long reported) {
			if (reported >= 0) {
				RateLimitUsage.current().report(reported);
			}
		}

		@RateLimited(name = "tokens", capacity = 100, period = "1m", estimate = "#maxTokens")
		public void failAfterReporting(long maxTokens, long reported) {
			if (reported >= 0) {
				RateLimitUsage.current().report(reported);
			}
			throw new IllegalStateException("model unavailable");
		}

		@RateLimited(name = "requests", capacity = 3, period = "1m")
		@RateLimited(name = "tokens", capacity = 100, period = "1m", estimate = "#maxTokens",
				actualCost = "#result.tokens")
		public Usage chat(long maxTokens, long used) {
			return new Usage(used);
		}

		@RateLimited(name = "tokens", capacity = 100, period = "1m", estimate = "50")
		public void outer(Models self) {
			self.inner();
			RateLimitUsage.current().report(20);
		}

		@RateLimited(name = "tokens", capacity = 100, period = "1m", estimate = "10")
		public void inner() {
			RateLimitUsage.current().report(7);
		}

		@RateLimited(name = "tokens", capacity = 100, period = "1m", estimate = "#maxTokens",
				actualCost = "#result.tokens")
		public CompletableFuture<Usage> completeLater(long maxTokens, long used) {
			return CompletableFuture.completedFuture(new Usage(used));
		}

		@RateLimited(name = "tokens", capacity = 100, period = "1m", estimate = "#maxTokens",
				actualCost = "#result.tokens")
		public Mono<Usage> completeReactively(long maxTokens, long used) {
			return Mono.fromSupplier(() -> new Usage(used));
		}

		@RateLimited(name = "tokens", capacity = 100, period = "1m", estimate = "#maxTokens")
		public Mono<String> reportReactively(long maxTokens, long used) {
			return Mono.deferContextual((context) -> {
				context.get(RateLimitUsage.class).report(used);
				return Mono.just("done");
			});
		}

		@RateLimited(name = "tokens", capacity = 100, period = "1m", estimate = "#maxTokens",
				actualCost = "#result.tokens")
		public Flux<Usage> stream(long maxTokens, int chunks, long used) {
			return Flux.range(1, chunks).map((i) -> new Usage((i == chunks) ? used : 0));
		}

		@RateLimited(name = "tokens", capacity = 100, period = "1m", estimate = "#maxTokens")
		public Flux<Integer> streamAndReport(long maxTokens, int chunks, long perChunk) {
			return Flux.deferContextual((context) -> {
				RateLimitUsage usage = context.get(RateLimitUsage.class);
				return Flux.range(1, chunks).doOnNext((i) -> usage.report(i * perChunk));
			});
		}

		@RateLimited(name = "tokens", capacity = 100, period = "1m", estimate = "#maxTokens",
				actualCost = "#result.tokens")
		public Flux<Usage> streamAndFail(long maxTokens) {
			return Flux.just(new Usage(1)).concatWith(Flux.error(new IllegalStateException("model unavailable")));
		}

		@RateLimited(name = "tokens", capacity = 100, period = "1m", estimate = "#maxTokens", actualCost = "10",
				countWhen = "#result == true")
		public boolean countedWhenAnswered(long maxTokens, boolean answered) {
			return answered;
		}

	}

}
