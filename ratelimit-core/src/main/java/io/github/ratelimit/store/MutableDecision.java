package io.github.ratelimit.store;

import java.util.List;

import io.github.ratelimit.internal.core.RateLimiter;

import org.jspecify.annotations.Nullable;

/**
 * The decision of one limit for one request, written in place. A caller that decides one
 * limit per request on its hot path keeps one of these (per thread, or per request) and
 * passes it to {@link RateLimiter#acquire(RateLimit, String, long, long, MutableDecision)},
 * so that deciding allocates nothing; {@link #toDecision()} and {@link #toResult()} give
 * the immutable values when a rejection or a refund needs them.
 * <p>
 * Mutable and not thread-safe: a store writes it while deciding, and its owner reads it
 * afterwards on the same thread. Its fields mean what the fields of
 * {@link RateLimitDecision} and {@link RateLimitResult} of the same names mean.
 */
public final class MutableDecision {

	private @Nullable RateLimit limit;

	private boolean allowed;

	private long remaining;

	private long resetMicros;

	private long retryAfterMicros;

	private long delayMicros;

	/** Length of a calendar quota's window; 0 for the limit's own quota window. */
	private long windowMicros;

	private long timestampMicros;

	private String store;

	private RateLimitStore refundTo;

	/**
	 * Writes the answer of a limit, as the algorithms decide it.
	 * @param limit the limit that decided
	 * @param allowed whether the request is admitted
	 * @param remaining quota units left after the request (before it, when rejected)
	 * @param resetMicros time until at least one more unit of quota becomes available
	 * @param retryAfterMicros when rejected, time until a request of the same cost would
	 * be admitted; 0 when allowed
	 * @param delayMicros how long an admitted request waits for its slot; 0 otherwise
	 * @return this decision
	 */
	public MutableDecision set(RateLimit limit, boolean allowed, long remaining, long resetMicros,
			long retryAfterMicros, long delayMicros) {
		this.limit = limit;
		this.allowed = allowed;
		this.remaining = remaining;
		this.resetMicros = resetMicros;
		this.retryAfterMicros = retryAfterMicros;
		this.delayMicros = delayMicros;
		this.windowMicros = 0;
		return this;
	}

	/**
	 * Writes the length of the window the decision was taken in, for a limit whose windows
	 * differ in length (a calendar quota); call it after
	 * {@link #set(RateLimit, boolean, long, long, long, long)}, which forgets it.
	 * @param windowMicros the window's length
	 * @return this decision
	 */
	public MutableDecision inWindow(long windowMicros) {
		this.windowMicros = windowMicros;
		return this;
	}

	/**
	 * Writes the answer of a limit from an immutable decision.
	 * @param decision the decision
	 * @return this decision
	 */
	public MutableDecision set(RateLimitDecision decision) {
		set(decision.limit(), decision.allowed(), decision.remaining(), decision.resetMicros(),
				decision.retryAfterMicros(), decision.delayMicros());
		return inWindow(decision.windowMicros());
	}

	/**
	 * Writes when and by which store the decision was taken, as a result carries them.
	 * @param timestampMicros the time the store decided at, needed to refund
	 * @param store which store decided: {@code memory}, {@code redis} or {@code fallback}
	 * @return this decision
	 */
	public MutableDecision decidedAt(long timestampMicros, String store) {
		return decidedAt(timestampMicros, store, null);
	}

	/**
	 * Writes when and by which store the decision was taken, and which store takes its
	 * refunds, as a result carries them.
	 * @param timestampMicros the time the store decided at, needed to refund
	 * @param store which store decided, as metrics report it
	 * @param refundTo the store that takes the refunds, {@code null} for the store asked
	 * @return this decision
	 * @see RateLimitResult#refundTo()
	 */
	public MutableDecision decidedAt(long timestampMicros, String store, RateLimitStore refundTo) {
		this.timestampMicros = timestampMicros;
		this.store = store;
		this.refundTo = refundTo;
		return this;
	}

	/**
	 * The limit that decided.
	 * @return the limit, {@code null} before anything was decided
	 */
	public @Nullable RateLimit limit() {
		return this.limit;
	}

	/**
	 * Whether the limit admitted the request.
	 * @return whether the request was admitted
	 */
	public boolean allowed() {
		return this.allowed;
	}

	/**
	 * Whether this decision turns the request away: a rejection by an enforced limit.
	 * @return whether the request is rejected
	 * @see RateLimitDecision#rejects()
	 */
	public boolean rejects() {
		return !this.allowed && !this.limit.shadow();
	}

	/**
	 * Quota units left after this request (before it, when rejected).
	 * @return the remaining units
	 */
	public long remaining() {
		return this.remaining;
	}

	/**
	 * Time until at least one more unit of quota becomes available.
	 * @return microseconds
	 */
	public long resetMicros() {
		return this.resetMicros;
	}

	/**
	 * When rejected, time until a request of the same cost would be admitted.
	 * @return microseconds, 0 when allowed
	 */
	public long retryAfterMicros() {
		return this.retryAfterMicros;
	}

	/**
	 * How long an admitted request waits for its drain slot or reserved slot.
	 * @return microseconds, 0 when nothing delays it
	 */
	public long delayMicros() {
		return this.delayMicros;
	}

	/**
	 * Length of the quota window the decision was taken in.
	 * @return microseconds
	 * @see RateLimitDecision#windowMicros()
	 */
	public long windowMicros() {
		return (this.windowMicros > 0) ? this.windowMicros : this.limit.quotaWindowMicros();
	}

	/**
	 * The time the store decided at, needed to refund.
	 * @return microseconds since the epoch
	 */
	public long timestampMicros() {
		return this.timestampMicros;
	}

	/**
	 * Which store decided, as metrics report it.
	 * @return {@code memory}, {@code redis}, {@code local}, {@code fallback} or an
	 * application store's name
	 */
	public String store() {
		return this.store;
	}

	/**
	 * Which store takes the refunds of this decision.
	 * @return the store, {@code null} for the store asked
	 * @see RateLimitResult#refundTo()
	 */
	public RateLimitStore refundTo() {
		return this.refundTo;
	}

	/**
	 * This decision as an immutable value, validated.
	 * @return the decision
	 */
	public RateLimitDecision toDecision() {
		return new RateLimitDecision(this.limit, this.allowed, this.remaining, this.resetMicros,
				this.retryAfterMicros, this.delayMicros, windowMicros());
	}

	/**
	 * This decision as the result of a request with one limit, as
	 * {@link RateLimiter#acquire(List)} would have answered it.
	 * @return the result
	 */
	public RateLimitResult toResult() {
		return new RateLimitResult(List.of(toDecision()), this.timestampMicros, this.store, this.refundTo);
	}

}
