package io.github.ratelimit.internal.core;

import java.util.Arrays;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.store.MutableDecision;
import io.github.ratelimit.store.RateLimit;
import io.github.ratelimit.store.RateLimitDecision;

/**
 * Calls in flight, as leases: each admitted unit of cost holds one lease until the call
 * gives it back or its lease time (the limit's period) runs out, whichever comes first.
 * Leases are kept as their expiry times, at most one per unit of capacity, so the state
 * of an identity never grows past its limit.
 * <p>
 * Leases taken at the same time by the same limit expire together and are
 * interchangeable, so a release names them by the time they were taken: it gives back
 * {@code cost} leases expiring at that time plus the lease time. A lease that has already
 * expired is not given back twice.
 */
final class ConcurrencyLeases implements BucketState {

	/** Longest a rejected caller is told to wait: a release may come at any moment. */
	static final long MAX_RETRY_MICROS = 1_000_000;

	private static final long[] NONE = new long[0];

	/** Expiry times of the leases held, in no particular order; the first {@link #held} count. */
	private long[] expiries = NONE;

	private int held;

	/** An empty state: no lease held. */
	ConcurrencyLeases() {
	}

	/** A state restored from the expiry times of its leases, as {@link BucketStateCodec} reads them. */
	ConcurrencyLeases(long[] expiries) {
		this.expiries = expiries.clone();
		this.held = expiries.length;
	}

	/** The expiry times of the leases held, in no particular order; a copy. */
	long[] expiries() {
		return Arrays.copyOf(this.expiries, this.held);
	}

	@Override
	public Algorithm algorithm() {
		return Algorithm.CONCURRENCY;
	}

	@Override
	public RateLimitDecision check(RateLimit limit, long now, long cost) {
		MutableDecision decision = new MutableDecision();
		check(limit, now, cost, 0, decision);
		return decision.toDecision();
	}

	@Override
	public void check(RateLimit limit, long now, long cost, long maxDelay, MutableDecision into) {
		expire(now);
		long capacity = limit.capacity();
		if (this.held + cost <= capacity) {
			into.set(limit, true, capacity - this.held - cost, 0, 0, 0);
			return;
		}
		long retry = Math.min(MAX_RETRY_MICROS, earliestExpiry() - now);
		into.set(limit, false, Math.max(0, capacity - this.held), retry, retry, 0);
	}

	@Override
	public void commit(RateLimit limit, long now, long cost) {
		expire(now);
		int needed = this.held + (int) cost;
		if (needed > this.expiries.length) {
			this.expiries = Arrays.copyOf(this.expiries, Math.max(needed, Math.min(2 * this.expiries.length,
					(int) Math.max(needed, limit.capacity()))));
		}
		long expiry = now + limit.periodMicros();
		for (int i = 0; i < cost; i++) {
			this.expiries[this.held++] = expiry;
		}
	}

	@Override
	public void refund(RateLimit limit, long timestamp, long cost) {
		long expiry = timestamp + limit.periodMicros();
		long left = cost;
		for (int i = this.held - 1; i >= 0 && left > 0; i--) {
			if (this.expiries[i] == expiry) {
				this.expiries[i] = this.expiries[--this.held];
				left--;
			}
		}
	}

	/** Calls in flight are counted, not costed: there is nothing to charge. */
	@Override
	public void charge(RateLimit limit, long now, long cost) {
		throw notSettleable(limit);
	}

	/** Calls in flight are counted, not costed: there is nothing to settle. */
	@Override
	public void settle(RateLimit limit, long timestamp, long now, long reserved, long actual) {
		throw notSettleable(limit);
	}

	private static IllegalArgumentException notSettleable(RateLimit limit) {
		return new IllegalArgumentException(
				"limit '" + limit.name() + "' counts calls in flight, which have no cost to settle");
	}

	/** Drops the leases whose time ran out: their holders were lost. */
	private void expire(long now) {
		for (int i = this.held - 1; i >= 0; i--) {
			if (this.expiries[i] <= now) {
				this.expiries[i] = this.expiries[--this.held];
			}
		}
	}

	private long earliestExpiry() {
		long earliest = Long.MAX_VALUE;
		for (int i = 0; i < this.held; i++) {
			earliest = Math.min(earliest, this.expiries[i]);
		}
		return earliest;
	}

}
