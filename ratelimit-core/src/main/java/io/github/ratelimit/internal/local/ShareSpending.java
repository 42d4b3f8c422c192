package io.github.ratelimit.internal.local;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

import io.github.ratelimit.internal.core.ShareGrant;
import io.github.ratelimit.internal.core.ShareRequest;
import io.github.ratelimit.store.Acquisition;
import io.github.ratelimit.store.RateLimitDecision;
import io.github.ratelimit.store.RateLimitResult;

/**
 * Spends a request's costs from its shares, and records into them what the shared store
 * decided and granted when the shares could not cover the request. Each share is touched
 * under its own monitor.
 */
final class ShareSpending {

	private final String name;

	private final long intervalMicros;

	private final ShareSyncer syncer;

	/**
	 * @param name the store name of decisions taken here, from the shares alone, as
	 * metrics report it
	 * @param intervalMicros the sync interval
	 * @param syncer gives back what a share forgotten meanwhile was granted
	 */
	ShareSpending(String name, long intervalMicros, ShareSyncer syncer) {
		this.name = name;
		this.intervalMicros = intervalMicros;
		this.syncer = syncer;
	}

	/**
	 * Decides from the shares alone: admitted when every share covers its cost, rejected
	 * when one that does not is waiting for the next sync. Otherwise returns null, leaving
	 * taken (and marked in {@code took}) the costs of the shares that cover theirs: the
	 * shared store is asked only for the others.
	 */
	RateLimitResult decide(List<Acquisition> acquisitions, Share[] owned, long[] took, long now) {
		boolean all = true;
		boolean waiting = false;
		// which shares rejected, as seen when they were tried: a sync may unblock them since
		boolean[] blocked = null;
		for (int i = 0; i < owned.length; i++) {
			Acquisition acquisition = acquisitions.get(i);
			synchronized (owned[i]) {
				Share share = owned[i];
				took[i] = (!share.removed && share.take(acquisition.limit(), acquisition.cost(), now))
						? share.grants + 1 : 0;
				if (took[i] == 0) {
					all = false;
					if (share.blockedUntil > now) {
						waiting = true;
						blocked = (blocked != null) ? blocked : new boolean[owned.length];
						blocked[i] = true;
					}
				}
			}
		}
		if (all) {
			List<RateLimitDecision> decisions = new ArrayList<>(owned.length);
			for (int i = 0; i < owned.length; i++) {
				synchronized (owned[i]) {
					decisions.add(new RateLimitDecision(acquisitions.get(i).limit(), true, owned[i].remaining(),
							owned[i].resetMicros(now), 0, 0, owned[i].windowMicros));
				}
			}
			return new RateLimitResult(decisions, now, this.name);
		}
		if (!waiting) {
			return null;
		}
		untake(acquisitions, owned, took);
		// an empty share waiting for the next sync rejects here, the others report what they hold
		List<RateLimitDecision> decisions = new ArrayList<>(owned.length);
		for (int i = 0; i < owned.length; i++) {
			Acquisition acquisition = acquisitions.get(i);
			synchronized (owned[i]) {
				Share share = owned[i];
				if (blocked[i]) {
					share.rejectHere(acquisition.cost());
					decisions.add(new RateLimitDecision(acquisition.limit(), false, share.remaining(),
							share.resetMicros(now), share.retryAfterMicros(now), 0, share.windowMicros));
				}
				else {
					decisions.add(new RateLimitDecision(acquisition.limit(), true, share.remaining(),
							share.resetMicros(now), 0, 0, share.windowMicros));
				}
			}
		}
		return new RateLimitResult(decisions, now, this.name);
	}

	/** Puts back into their shares the costs marked in {@code took}. */
	static void untake(List<Acquisition> acquisitions, Share[] owned, long[] took) {
		for (int i = 0; i < owned.length; i++) {
			if (took[i] != 0) {
				synchronized (owned[i]) {
					owned[i].untake(acquisitions.get(i).cost(), took[i] - 1);
				}
				took[i] = 0;
			}
		}
	}

	/**
	 * Marks the shares as asked by this request, so that no sync refills them meanwhile;
	 * or, when a sync already refills one the request needs, marks nothing and returns
	 * that refill to wait for.
	 */
	static CompletableFuture<?> claim(Share[] owned, long[] took, boolean waitForRefill) {
		for (int i = 0; i < owned.length; i++) {
			synchronized (owned[i]) {
				if (waitForRefill && took[i] == 0 && owned[i].refreshing) {
					CompletableFuture<?> refill = owned[i].refill;
					for (int j = 0; j < i; j++) {
						synchronized (owned[j]) {
							owned[j].asking--;
						}
					}
					return refill;
				}
				owned[i].asking++;
			}
		}
		return null;
	}

	/** Ends what {@link #claim} marked. */
	static void release(Share[] owned) {
		for (Share share : owned) {
			synchronized (share) {
				share.asking--;
			}
		}
	}

	/** What to ask the shared store: the costs the shares did not cover, and more units for each. */
	static List<ShareRequest> requests(List<Acquisition> acquisitions, Share[] owned, long[] took) {
		List<ShareRequest> requests = new ArrayList<>(owned.length);
		for (int i = 0; i < owned.length; i++) {
			Acquisition acquisition = acquisitions.get(i);
			long cost = (took[i] != 0) ? 0 : acquisition.cost();
			long extra;
			synchronized (owned[i]) {
				extra = owned[i].extraWanted(acquisition.limit(), acquisition.cost());
			}
			requests.add(new ShareRequest(acquisition.limit(), acquisition.identity(), cost, extra));
		}
		return requests;
	}

	/**
	 * Records what the shared store decided and granted into the shares: when it rejects,
	 * the costs taken from shares go back into them.
	 */
	RateLimitResult granted(List<Acquisition> acquisitions, Share[] owned, long[] took, List<ShareRequest> requests,
			ShareGrant grant, long now) {
		release(owned);
		RateLimitResult result = grant.result();
		boolean allowed = result.allowed();
		if (!allowed) {
			untake(acquisitions, owned, took);
		}
		List<RateLimitDecision> answered = new ArrayList<>(owned.length);
		for (int i = 0; i < owned.length; i++) {
			RateLimitDecision decision = result.decisions().get(i);
			long cost = acquisitions.get(i).cost();
			synchronized (owned[i]) {
				Share share = owned[i];
				if (allowed) {
					if (took[i] == 0) {
						share.used += cost;
						share.requests++;
					}
					share.granted(decision, grant.extra()[i], requests.get(i).extra(), result.timestampMicros(), now,
							this.intervalMicros);
					if (share.removed && share.units > 0) {
						// forgotten by a sync meanwhile: nobody here will spend what came
						this.syncer.giveBack(share, share.takeAll(now), result.timestampMicros(), new ArrayList<>());
					}
					// what this instance now holds is still there for its client
					answered.add(new RateLimitDecision(decision.limit(), true, share.remaining(),
							decision.resetMicros(), 0, decision.delayMicros(), decision.windowMicros()));
				}
				else {
					if (decision.rejects()) {
						share.rejectHere(cost);
						share.rejectedBy(decision, now, this.intervalMicros);
					}
					answered.add(decision);
				}
			}
		}
		return new RateLimitResult(answered, result.timestampMicros(), result.store(), result.refundTo());
	}

}
