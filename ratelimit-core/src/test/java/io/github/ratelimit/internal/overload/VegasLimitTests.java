package io.github.ratelimit.internal.overload;

import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;

import io.github.ratelimit.RequestPriority;
import io.github.ratelimit.internal.overload.OverloadLimiter.Outcome;
import io.github.ratelimit.internal.overload.OverloadLimiter.Permit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link VegasLimit}, fed samples on a virtual clock.
 */
class VegasLimitTests {

	private static final long MS = 1_000_000L;

	private final VegasLimit vegas = new VegasLimit(new LimitBounds(20, 1, 1000), 0);

	private long now;

	@Test
	void growsWhileNoCallQueues() {
		sample(200, 10 * MS, 20, 20);
		assertThat(this.vegas.limit()).isGreaterThan(40);
	}

	@Test
	void doesNotGrowWhileTheLimitIsNotUsed() {
		sample(1_000, 10 * MS, 9, 20);
		assertThat(this.vegas.limit()).isEqualTo(20);
	}

	@Test
	void shrinksWhenCallsQueue() {
		sample(20, 10 * MS, 20, 20);
		int learned = this.vegas.limit();
		// every call takes twice the no-load latency: half the calls in flight are queued
		sample(100, 20 * MS, learned, learned);
		assertThat(this.vegas.limit()).isLessThan(learned - 5);
		assertThat(this.vegas.noLoadNanos()).isEqualTo(10 * MS);
	}

	@Test
	void holdsWhileTheQueueIsBetweenAlphaAndBeta() {
		// limit 20: alpha = 2 * log10(20) = 2.6, beta = 5.2; 25% slower than no load is 5 queued
		sample(1, 10 * MS, 1, 20);
		sample(250, 12_500_000, 20, 20);
		assertThat(this.vegas.limit()).isEqualTo(20);
	}

	@Test
	void aDropShrinksTheLimitByATenthOncePerRoundTrip() {
		VegasLimit vegas = new VegasLimit(new LimitBounds(100, 1, 1000), 0);
		vegas.onSample(0, 10 * MS, 100, 100, true);
		assertThat(vegas.limit()).isEqualTo(90);
		// started before the decrease (at 10 ms): it was in flight under the old limit
		vegas.onSample(5 * MS, 10 * MS, 100, 100, true);
		assertThat(vegas.limit()).isEqualTo(90);
		vegas.onSample(10 * MS, 10 * MS, 90, 90, true);
		assertThat(vegas.limit()).isEqualTo(81);
	}

	@Test
	void growsUnderSheddableTrafficAlone() {
		// sheddable calls stop at 20% of the limit: 4 of 20
		OverloadLimiter limiter = OverloadLimiter.builder(this.vegas).reserves(0.5, 0.3).ticker(() -> this.now).build();
		for (int round = 0; round < 200; round++) {
			List<Permit> permits = new ArrayList<>();
			Permit permit;
			while (!(permit = limiter.tryAcquire(RequestPriority.SHEDDABLE)).shed()) {
				permits.add(permit);
			}
			this.now += 10 * MS;
			permits.forEach((admitted) -> admitted.release(Outcome.SUCCEEDED));
		}
		assertThat(limiter.limit()).isGreaterThanOrEqualTo(100);
		assertThat(limiter.ceiling(RequestPriority.SHEDDABLE)).isGreaterThanOrEqualTo(20);
	}

	@Test
	void forgetsAnOldNoLoadLatencyWithinTwoWindowsOfSamples() {
		sample(1, 10 * MS, 1, 20);
		// not in use, so the limit (and the window, 300..600 samples at limit 20) stays
		sample(299, 30 * MS, 1, 20);
		assertThat(this.vegas.noLoadNanos()).isEqualTo(10 * MS);
		sample(2 * 600 - 299, 30 * MS, 1, 20);
		assertThat(this.vegas.noLoadNanos()).isEqualTo(30 * MS);
	}

	@Test
	void forgetsAnOldNoLoadLatencyWithinTwentySecondsOfFewCalls() {
		sample(1, 10 * MS, 1, 20);
		for (int i = 0; i < 5; i++) {
			this.now += 5_000 * MS;
			sample(1, 30 * MS, 1, 20);
		}
		assertThat(this.vegas.noLoadNanos()).isEqualTo(30 * MS);
	}

	@Test
	void aFewMuchFasterCallsDoNotReadAsAQueue() {
		// one call in 50 is a status check answered in 0.1 ms, the rest take 40 ms: with the
		// fastest call as the no-load latency, every 40 ms call would read as queued
		for (int i = 0; i < 5_000; i++) {
			int inFlight = this.vegas.limit();
			this.vegas.onSample(this.now, (i % 50 == 1) ? MS / 10 : 40 * MS, inFlight, inFlight, false);
			this.now += MS;
		}
		assertThat(this.vegas.noLoadNanos()).isEqualTo(40 * MS);
		assertThat(this.vegas.limit()).isGreaterThan(100);
	}

	@Test
	void statusChecksOfAnIdleServiceDoNotMakeItLookFaster() {
		sample(2_000, 40 * MS, 1, 20);
		int learned = this.vegas.limit();
		// the load stops; a client polls a status endpoint twenty times, then nothing for 20 s
		sample(20, MS / 10, 1, 20);
		this.now += 20_000 * MS;
		// the load comes back: the window that closes now saw mostly status checks
		sample(1, 40 * MS, learned, learned);
		assertThat(this.vegas.noLoadNanos()).isEqualTo(40 * MS);
		sample(200, 40 * MS, learned, learned);
		assertThat(this.vegas.limit()).isGreaterThan(learned);
	}

	@Test
	void aServiceThatBecameMuchFasterIsBelievedAfterAFullWindow() {
		sample(2_000, 30 * MS, 1, 20);
		sample(2 * 600, 5 * MS, 1, 20);
		assertThat(this.vegas.noLoadNanos()).isEqualTo(5 * MS);
	}

	@Test
	void aFewCallsWithinTenSecondsEstimateFromTheFastest() {
		sample(1, 30 * MS, 1, 20);
		sample(1, 10 * MS, 1, 20);
		sample(1, 20 * MS, 1, 20);
		assertThat(this.vegas.noLoadNanos()).isEqualTo(10 * MS);
		this.now += 10_000 * MS;
		// the first window closed on time with three calls: its estimate is its fastest
		sample(1, 50 * MS, 1, 20);
		assertThat(this.vegas.noLoadNanos()).isEqualTo(10 * MS);
	}

	@Test
	void learnsTheSameOnTheSameTicker() {
		VegasLimit other = new VegasLimit(new LimitBounds(20, 1, 1000), 0);
		long start = 0;
		for (int i = 0; i < 5_000; i++) {
			long rtt = (10 + (i * 7919L) % 13) * MS;
			int inFlight = this.vegas.limit();
			this.vegas.onSample(start, rtt, inFlight, inFlight, false);
			other.onSample(start, rtt, inFlight, inFlight, false);
			start += MS;
		}
		assertThat(this.vegas.limit()).isEqualTo(other.limit());
		assertThat(this.vegas.noLoadNanos()).isEqualTo(other.noLoadNanos());
	}

	private void sample(int count, long rtt, int inFlight, int ceiling) {
		for (int i = 0; i < count; i++) {
			this.vegas.onSample(this.now, rtt, inFlight, ceiling, false);
			this.now += MS;
		}
	}

}
