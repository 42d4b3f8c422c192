package io.github.ratelimit.internal.local;

import java.util.concurrent.CompletableFuture;

import io.github.ratelimit.internal.core.AlgorithmSpec;
import io.github.ratelimit.store.RateLimit;
import io.github.ratelimit.store.RateLimitDecision;

/**
 * This instance's share of one bucket: units the shared store has counted as taken, to be
 * spent here, and the demand seen since the last sync. Guarded by its own monitor.
 */
final class Share {

	final String identity;

	/** The limit as last asked for (a plan may have changed its capacity). */
	volatile RateLimit limit;

	/** Units taken from the shared bucket and not yet spent here. */
	long units;

	/**
	 * Counts the grants of ended windows: a cost taken from units of an earlier window is
	 * not returned into this one.
	 */
	long grants;

	/** Local time at which the units lapse: when the window they were counted in ends. */
	long expiresAt = Long.MAX_VALUE;

	/** The shared store's time at which the window of the units ends; MAX_VALUE for a bucket. */
	long windowEnd = Long.MAX_VALUE;

	/** The shared store's time of the last grant: the window units are given back to. */
	long grantedAt;

	/** Units spent here, and units asked for but rejected here, since the last sync. */
	long used;

	long rejected;

	/** Units asked for in the interval before the last sync. */
	long lastDemand;

	/** Requests since the last sync, and in the interval before it. */
	int requests;

	int lastRequests;

	/** What the shared bucket had left after the last grant, for other instances too. */
	long sharedRemaining;

	long resetAt;

	long windowMicros;

	/** Until when an empty share rejects here rather than ask the shared store. */
	long blockedUntil;

	/** When the shared store said more units come. */
	long retryAt;

	int idleSyncs;

	boolean refreshing;

	/** Completes when the sync's refill of this share has been recorded. */
	CompletableFuture<Void> refill;

	/** Requests asking the shared store for this bucket now. */
	int asking;

	boolean removed;

	/** What the last {@link #settle} decided: units to give back, and to ask for. */
	long giveBack;

	long want;

	@Override
	public synchronized String toString() {
		return "Share[" + this.identity + " units=" + this.units + " used=" + this.used + " rejected=" + this.rejected
				+ " blockedUntil=" + this.blockedUntil + " retryAt=" + this.retryAt + " refreshing=" + this.refreshing
				+ " asking=" + this.asking + " removed=" + this.removed + " idle=" + this.idleSyncs + "]";
	}

	Share(RateLimit limit, String identity) {
		this.limit = limit;
		this.identity = identity;
		this.windowMicros = limit.quotaWindowMicros();
		this.sharedRemaining = limit.capacity();
	}

	boolean take(RateLimit asked, long cost, long now) {
		this.limit = asked;
		if (this.expiresAt <= now && this.units != 0) {
			this.units = 0;
			this.grants++;
		}
		if (this.units < cost) {
			return false;
		}
		this.units -= cost;
		this.used += cost;
		this.requests++;
		return true;
	}

	/** Returns a cost taken from the units of grant number {@code grant}, unless they have lapsed. */
	void untake(long cost, long grant) {
		if (grant == this.grants) {
			this.units += cost;
		}
		this.used -= cost;
		this.requests--;
	}

	/**
	 * Takes back a refunded acquisition, unless its window has ended, the share is gone,
	 * or the share holds units of another window than the one ({@code windowEnd}) the
	 * acquisition was counted in: there the unit would be one that window never counted.
	 */
	boolean giveBack(long cost, long now, long windowEnd) {
		if (this.removed || this.expiresAt <= now || windowEnd != this.windowEnd) {
			return false;
		}
		this.units = Math.min(this.limit.capacity(), this.units + cost);
		return true;
	}

	/**
	 * Charges units a settled call used beyond its reservation out of the units held here,
	 * which the shared store has already counted as taken: as many as the share holds,
	 * none when it is gone or its units have lapsed. The rest is the shared store's to
	 * charge, and this share admits nothing more until it is granted units again.
	 * @return the units charged here
	 */
	long charge(long cost, long now) {
		if (this.removed || this.expiresAt <= now || this.units <= 0) {
			return 0;
		}
		long charged = Math.min(cost, this.units);
		this.units -= charged;
		this.used += charged;
		return charged;
	}

	long takeAll(long now) {
		long units = (this.expiresAt > now) ? this.units : 0;
		this.units = 0;
		return units;
	}

	/** Units to ask for beyond a request's cost when the share cannot cover it. */
	long extraWanted(RateLimit asked, long cost) {
		if (ShareDemand.cold(Math.max(this.lastRequests, this.requests + 1))) {
			// one request an interval at most: take no more than its cost, which would only
			// be given back at the next sync
			return 0;
		}
		long demand = Math.max(this.lastDemand, this.used + this.rejected + cost);
		long target = ShareDemand.target(asked, demand);
		return Math.max(0, target - cost - Math.max(0, this.units));
	}

	long remaining() {
		return Math.min(this.limit.capacity(), this.units + this.sharedRemaining);
	}

	long resetMicros(long now) {
		return Math.max(0, this.resetAt - now);
	}

	/** Time until the share may admit again: the shared store's retry-after, or the next sync. */
	long retryAfterMicros(long now) {
		return Math.max(1, Math.max(this.retryAt, this.blockedUntil) - now);
	}

	/** Counts a request turned away, as demand the next sync asks for. */
	void rejectHere(long cost) {
		this.rejected += cost;
		this.requests++;
	}

	/** Decides what this sync gives back or asks for, and starts counting anew. */
	void settle(long now) {
		this.giveBack = 0;
		this.want = 0;
		// this is the sync an empty share waited for: from now on it may ask again
		this.blockedUntil = 0;
		if (this.expiresAt <= now) {
			// the expiry stays: a refund of the lapsed window must not make units of it
			this.units = 0;
			this.grants++;
		}
		if (this.refreshing || this.asking > 0) {
			// a request is asking the shared store for this bucket: settle at the next sync
			return;
		}
		long demand = this.used + this.rejected;
		int asked = this.requests;
		this.lastDemand = demand;
		this.lastRequests = asked;
		this.used = 0;
		this.rejected = 0;
		this.requests = 0;
		if (ShareDemand.cold(asked)) {
			// idle or cold: a share would cost a call per sync for at most one request
			this.idleSyncs = (demand == 0) ? this.idleSyncs + 1 : 0;
			this.giveBack = this.units;
		}
		else {
			this.idleSyncs = 0;
			long target = ShareDemand.target(this.limit, demand);
			this.giveBack = Math.max(0, this.units - target);
			if (this.units < target) {
				this.want = target - this.units;
				this.refreshing = true;
				this.refill = new CompletableFuture<>();
			}
		}
		this.units -= this.giveBack;
		// what goes back is there for every instance again
		this.sharedRemaining = Math.min(this.limit.capacity(), this.sharedRemaining + this.giveBack);
	}

	/**
	 * Adds what the shared store granted: {@code extra} units granted at {@code
	 * storeTime}, of {@code wanted} asked for (0: whatever it could).
	 */
	void granted(RateLimitDecision decision, long extra, long wanted, long storeTime, long now,
			long intervalMicros) {
		long expires = AlgorithmSpec.of(this.limit.algorithm())
			.shareExpiresAtMicros(this.limit, storeTime, decision.resetMicros());
		if (expires != this.windowEnd) {
			// another window: what was left of the last one no longer counts there
			this.units = 0;
			this.grants++;
			this.windowEnd = expires;
		}
		this.expiresAt = (expires == Long.MAX_VALUE) ? Long.MAX_VALUE : now + Math.max(0, expires - storeTime);
		this.units = Math.min(this.limit.capacity(), this.units + extra);
		this.grantedAt = storeTime;
		this.sharedRemaining = decision.remaining();
		this.resetAt = now + decision.resetMicros();
		this.windowMicros = decision.windowMicros();
		if (wanted > 0 && extra < wanted) {
			// the bucket is short: spend what came, then wait for the next sync (or for
			// the window to end, when a window's units run out)
			this.blockedUntil = Math.min(now + intervalMicros, this.expiresAt);
			this.retryAt = now + Math.max(decision.resetMicros(), intervalMicros);
		}
		else {
			this.blockedUntil = 0;
		}
	}

	/**
	 * The shared store rejected: ask it again at the next sync at the earliest, which
	 * collects what refilled meanwhile; a window's share, when its window ends if that
	 * comes first.
	 */
	void rejectedBy(RateLimitDecision decision, long now, long intervalMicros) {
		this.sharedRemaining = decision.remaining();
		this.resetAt = now + decision.resetMicros();
		this.windowMicros = decision.windowMicros();
		this.retryAt = now + decision.retryAfterMicros();
		boolean windows = AlgorithmSpec.of(this.limit.algorithm()).windowsAligned();
		this.blockedUntil = now
				+ (windows ? Math.min(decision.retryAfterMicros(), intervalMicros) : intervalMicros);
	}

}
