package io.github.ratelimit.internal.core;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.store.MutableDecision;
import io.github.ratelimit.store.RateLimit;
import io.github.ratelimit.store.RateLimitDecision;

/**
 * Token bucket kept as one timestamp: the theoretical time at which the bucket is full
 * again (the generic cell rate algorithm). With emission interval {@code T = period /
 * refillTokens} and burst {@code C·T}, the bucket holds {@code C − (tat − now)/T} tokens,
 * which is exactly the lazy refill {@code min(C, tokens + elapsed·r)}.
 * <p>
 * The state also remembers the emission interval it was written with. When the limit
 * changes under an existing bucket (the identity moved to another plan), the debt is kept
 * in tokens rather than in time: a bucket that used 60 of 100 tokens still owes 60 after
 * an upgrade to 1,000 at a faster rate, so it has 940 left, not the tokens a time debt
 * would convert to.
 */
class TokenBucket implements BucketState {

	/** Time at which the bucket is full again; in the past means full. */
	long tat = Long.MIN_VALUE;

	/** Emission interval {@link #tat} was computed with; 0 before the first commit. */
	long interval;

	@Override
	public Algorithm algorithm() {
		return Algorithm.TOKEN_BUCKET;
	}

	@Override
	public RateLimitDecision check(RateLimit limit, long now, long cost) {
		return check(limit, now, cost, 0);
	}

	/**
	 * Reserving lets the theoretical arrival time run ahead of the burst: the request's
	 * slot is the time its cost fits into the bucket, and callers reserving one after
	 * another get slots one emission interval apart.
	 */
	@Override
	public RateLimitDecision check(RateLimit limit, long now, long cost, long maxDelay) {
		MutableDecision decision = new MutableDecision();
		check(limit, now, cost, maxDelay, decision);
		return decision.toDecision();
	}

	@Override
	public void check(RateLimit limit, long now, long cost, long maxDelay, MutableDecision into) {
		decide(limit, now, cost, maxDelay, into, false);
	}

	@Override
	public void acquire(RateLimit limit, long now, long cost, long maxDelay, MutableDecision into) {
		decide(limit, now, cost, maxDelay, into, true);
	}

	/** Decides, and when admitted and asked to, commits with what the decision computed. */
	private void decide(RateLimit limit, long now, long cost, long maxDelay, MutableDecision into, boolean commit) {
		long interval = limit.emissionIntervalMicros();
		long burst = limit.capacity() * interval;
		long start = Math.max(tatAt(interval, now), now);
		long newTat = start + cost * interval;
		if (newTat - now <= burst) {
			long debt = newTat - now;
			into.set(limit, true, (burst - debt) / interval, untilNextUnit(debt, interval), 0, delay(start, now));
			if (commit) {
				this.tat = newTat;
				this.interval = interval;
			}
			return;
		}
		long wait = newTat - burst - now;
		if (maxDelay > 0 && reservedDelay(start, now, wait) <= maxDelay) {
			// nothing is left until the bucket has drained past this reservation
			into.set(limit, true, 0, wait + interval, 0, reservedDelay(start, now, wait));
			if (commit) {
				this.tat = newTat;
				this.interval = interval;
			}
			return;
		}
		long debt = start - now;
		// a bucket used beyond a since lowered capacity has nothing left until it drains to it
		long remaining = Math.max(0, (burst - debt) / interval);
		long reset = (debt > burst) ? debt - burst + interval : untilNextUnit(debt, interval);
		into.set(limit, false, remaining, reset, newTat - burst - now, 0);
	}

	@Override
	public void commit(RateLimit limit, long now, long cost) {
		long interval = limit.emissionIntervalMicros();
		this.tat = Math.max(tatAt(interval, now), now) + cost * interval;
		this.interval = interval;
	}

	@Override
	public void refund(RateLimit limit, long timestamp, long cost) {
		if (this.tat != Long.MIN_VALUE) {
			// the debt is priced at the interval it was recorded with
			this.tat -= cost * ((this.interval != 0) ? this.interval : limit.emissionIntervalMicros());
		}
	}

	/** Beyond the burst, the debt a charge left lasts as long as its tokens take to refill. */
	@Override
	public long overdraftMicros(RateLimit limit, long now) {
		if (this.tat == Long.MIN_VALUE) {
			return 0;
		}
		long interval = limit.emissionIntervalMicros();
		return Math.max(0, tatAt(interval, now) - now - limit.capacity() * interval);
	}

	/**
	 * The time the bucket is full again under an emission interval: the recorded debt,
	 * re-priced token for token when it was recorded at another interval. Rounded up, in
	 * doubles, in the same order as {@code token_bucket.lua}.
	 */
	long tatAt(long interval, long now) {
		if (this.interval == 0 || this.interval == interval || this.tat <= now) {
			return this.tat;
		}
		double debt = this.tat - now;
		return now + (long) Math.ceil(debt * interval / this.interval);
	}

	/** Time a leaky bucket holds an admitted request; a token bucket admits at once. */
	long delay(long start, long now) {
		return 0;
	}

	/**
	 * Time a request holding a reserved slot waits: until its cost fits into the bucket
	 * ({@code wait}); a leaky bucket also drains the requests ahead of it.
	 */
	long reservedDelay(long start, long now, long wait) {
		return wait;
	}

	/** Time until a debt of {@code debt} microseconds shrinks by one whole token. */
	static long untilNextUnit(long debt, long interval) {
		return (debt <= 0) ? 0 : ((debt - 1) % interval) + 1;
	}

}
