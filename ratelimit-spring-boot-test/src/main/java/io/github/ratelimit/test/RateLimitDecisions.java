package io.github.ratelimit.test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.assertj.core.api.AssertProvider;

import io.github.ratelimit.store.RateLimitObserver;
import io.github.ratelimit.store.Acquisition;
import io.github.ratelimit.store.RateLimitDecision;
import io.github.ratelimit.store.RateLimitResult;

/**
 * Records every decision the application's limits make, in order, so that a test can
 * check which limit admitted or rejected which identity. {@link AutoConfigureRateLimitTest}
 * registers it as a {@link RateLimitObserver} bean and clears it before every test.
 * AssertJ reads it directly:
 * <pre class="code">
 * assertThat(decisions).hasRejected("orders", "user:alice");
 * </pre>
 * Thread-safe: requests served on other threads (a server on a random port) are recorded
 * too.
 */
public final class RateLimitDecisions implements RateLimitObserver, AssertProvider<RateLimitDecisionsAssert> {

	private final List<RecordedDecision> recorded = new ArrayList<>();

	@Override
	public void decided(List<Acquisition> acquisitions, RateLimitResult result, long nanos) {
		List<RecordedDecision> decisions = new ArrayList<>(acquisitions.size());
		for (int i = 0; i < acquisitions.size(); i++) {
			Acquisition acquisition = acquisitions.get(i);
			RateLimitDecision decision = result.decisions().get(i);
			decisions.add(new RecordedDecision(acquisition.limit().name(), acquisition.identity(), acquisition.cost(),
					decision.allowed(), decision.remaining(),
					Duration.ofNanos(TimeUnit.MICROSECONDS.toNanos(decision.retryAfterMicros())),
					acquisition.limit().shadow(), result.store()));
		}
		synchronized (this.recorded) {
			this.recorded.addAll(decisions);
		}
	}

	/**
	 * Every decision recorded since the last {@link #clear()}, oldest first.
	 * @return the decisions
	 */
	public List<RecordedDecision> all() {
		synchronized (this.recorded) {
			return List.copyOf(this.recorded);
		}
	}

	/**
	 * The decisions of one limit, oldest first.
	 * @param limit the limit name
	 * @return its decisions
	 */
	public List<RecordedDecision> of(String limit) {
		return all().stream().filter((decision) -> decision.limit().equals(limit)).toList();
	}

	/**
	 * The rejections (including what shadow limits would have rejected), oldest first.
	 * @return the rejections
	 */
	public List<RecordedDecision> rejected() {
		return all().stream().filter(RecordedDecision::rejected).toList();
	}

	/**
	 * Forgets every recorded decision.
	 */
	public void clear() {
		synchronized (this.recorded) {
			this.recorded.clear();
		}
	}

	@Override
	public RateLimitDecisionsAssert assertThat() {
		return new RateLimitDecisionsAssert(this);
	}

	@Override
	public String toString() {
		return "RateLimitDecisions " + all();
	}

}
