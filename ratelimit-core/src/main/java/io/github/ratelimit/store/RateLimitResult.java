package io.github.ratelimit.store;

import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The decisions of every limit applied to one request, taken together.
 * <p>
 * What reports a decision and what routes its refund are separate: {@link #store()} is
 * the name metrics, health and the actuator show; {@link #refundTo()} is the store a
 * decorator hands the refund to when another store than the one it wraps decided.
 *
 * @param decisions one decision per acquisition, in the order they were asked
 * @param timestampMicros the time the store decided at, needed to refund
 * @param store which store decided, as metrics report it: {@code memory}, {@code redis},
 * {@code local} (in memory, from a local-first share), {@code fallback} or an application
 * store's name
 * @param refundTo the store that takes this result's refunds when a decorator let a store
 * other than the one it wraps decide (a failover store's fallback); {@code null} when the
 * store asked takes them
 */
public record RateLimitResult(List<RateLimitDecision> decisions, long timestampMicros, String store,
		RateLimitStore refundTo) {

	/** Store name of the in-memory store. */
	public static final String MEMORY = "memory";

	/** Store name of the Redis store. */
	public static final String REDIS = "redis";

	/** Store name of the local fallback deciding while the remote store fails. */
	public static final String FALLBACK = "fallback";

	/**
	 * Store name of decisions a local-first store takes in memory, from its share of a
	 * shared bucket, without asking the shared store.
	 */
	public static final String LOCAL = "local";

	public RateLimitResult {
		decisions = List.copyOf(decisions);
	}

	/**
	 * A result whose refunds go to the store asked.
	 * @param decisions the decisions
	 * @param timestampMicros the decision time
	 * @param store the store name, as metrics report it
	 */
	public RateLimitResult(List<RateLimitDecision> decisions, long timestampMicros, String store) {
		this(decisions, timestampMicros, store, null);
	}

	/**
	 * A result decided by the in-memory store.
	 * @param decisions the decisions
	 * @param timestampMicros the decision time
	 */
	public RateLimitResult(List<RateLimitDecision> decisions, long timestampMicros) {
		this(decisions, timestampMicros, MEMORY);
	}

	/**
	 * This result reported under another store name, its refunds routed as before.
	 * @param name the store name
	 * @return the result
	 */
	public RateLimitResult decidedBy(String name) {
		return new RateLimitResult(this.decisions, this.timestampMicros, name, this.refundTo);
	}

	/**
	 * This result as decided by another store, which takes its refunds.
	 * @param name the store name, as metrics report it
	 * @param refundTo the store that takes the refunds
	 * @return the result
	 */
	public RateLimitResult decidedBy(String name, RateLimitStore refundTo) {
		return new RateLimitResult(this.decisions, this.timestampMicros, name, refundTo);
	}

	/**
	 * Whether every enforced limit admitted the request (and so each consumed its cost);
	 * shadow limits never turn a request away.
	 * @return whether the request is allowed
	 */
	public boolean allowed() {
		// indexed loops here and below: they run on every request, and an iterator is an
		// allocation the compiler does not always remove
		for (int i = 0; i < this.decisions.size(); i++) {
			if (this.decisions.get(i).rejects()) {
				return false;
			}
		}
		return true;
	}

	/**
	 * The decisions that rejected the request.
	 * @return the rejections, empty when allowed
	 */
	public List<RateLimitDecision> rejections() {
		return this.decisions.stream().filter(RateLimitDecision::rejects).toList();
	}

	/**
	 * Longest wait a leaky bucket or a reserved slot imposes on this request.
	 * @return microseconds, 0 when nothing delays it
	 */
	public long delayMicros() {
		long delay = 0;
		for (int i = 0; i < this.decisions.size(); i++) {
			RateLimitDecision decision = this.decisions.get(i);
			if (!decision.limit().shadow()) {
				delay = Math.max(delay, decision.delayMicros());
			}
		}
		return delay;
	}

	/**
	 * Holds the calling thread until a leaky bucket's drain slot (or a reserved slot) for
	 * this request. An interrupt ends the wait early and is preserved.
	 */
	public void awaitDelay() {
		long micros = delayMicros();
		if (micros <= 0) {
			return;
		}
		try {
			TimeUnit.MICROSECONDS.sleep(micros);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}

}
