package io.github.ratelimit.internal.core;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

import io.github.ratelimit.store.Acquisition;
import io.github.ratelimit.store.BucketSnapshot;
import io.github.ratelimit.store.RateLimitDecision;
import io.github.ratelimit.store.RateLimitResult;
import io.github.ratelimit.store.RateLimitStore;

/**
 * A store that can hand units of a bucket to one instance, to be spent there without
 * asking the store again: what the local-first store builds on. The Redis store
 * grants shares in the same single script call that decides the costs.
 */
public interface ShareStore {

	/**
	 * Decides the costs together, all or nothing, and when every enforced limit admits,
	 * takes from each bucket up to its request's {@link ShareRequest#extra()} more units, as many
	 * as it has left.
	 * @param requests requests naming distinct buckets of shareable limits
	 * @return the decisions and the units taken beyond each cost
	 */
	ShareGrant grant(List<ShareRequest> requests);

	/**
	 * Grants like {@link #grant} without holding the calling thread while the store works.
	 * @param requests requests naming distinct buckets of shareable limits
	 * @return the result, completed exceptionally as {@link #grant} would throw
	 */
	default CompletionStage<ShareGrant> grantAsync(List<ShareRequest> requests) {
		try {
			return CompletableFuture.completedFuture(grant(requests));
		}
		catch (RuntimeException ex) {
			return CompletableFuture.failedFuture(ex);
		}
	}

	/**
	 * Grants from any store in two steps: the costs first, then each extra as one more
	 * acquisition of what the first step reported left. The steps are not one atomic
	 * operation, so a concurrent caller can leave an extra ungranted, but nothing is ever
	 * granted that the store did not admit. Meant for stores without a grant call of their
	 * own, such as the in-memory store in simulations and tests.
	 * @param store the store
	 * @param clock the store's clock, for the time of a grant that took nothing
	 * @return a sharing view of the store
	 */
	static ShareStore over(RateLimitStore store, RateLimitClock clock) {
		return (requests) -> {
			List<Acquisition> costs = new ArrayList<>(requests.size());
			for (ShareRequest request : requests) {
				if (request.cost() > 0) {
					costs.add(new Acquisition(request.limit(), request.identity(), request.cost()));
				}
			}
			RateLimitResult paid = costs.isEmpty() ? null : store.tryAcquire(costs);
			long[] extra = new long[requests.size()];
			List<RateLimitDecision> decisions = new ArrayList<>(requests.size());
			long timestamp = (paid != null) ? paid.timestampMicros() : clock.nowMicros();
			int next = 0;
			for (int i = 0; i < requests.size(); i++) {
				ShareRequest request = requests.get(i);
				RateLimitDecision decision = (request.cost() > 0) ? paid.decisions().get(next++) : null;
				boolean admitted = paid == null || paid.allowed();
				BucketSnapshot snapshot = (decision != null) ? null : store.inspect(request.limit(), request.identity());
				long left = (decision != null) ? decision.remaining() : snapshot.remaining();
				long wanted = Math.min(request.extra(), left);
				if (admitted && wanted > 0) {
					RateLimitResult more = store
						.tryAcquire(List.of(new Acquisition(request.limit(), request.identity(), wanted)));
					timestamp = more.timestampMicros();
					RateLimitDecision taken = more.decisions().get(0);
					if (taken.allowed()) {
						extra[i] = wanted;
						decision = taken;
					}
				}
				if (decision == null) {
					decision = new RateLimitDecision(request.limit(), true, left, snapshot.resetMicros(), 0, 0);
				}
				decisions.add(decision);
			}
			String name = (paid != null) ? paid.store() : store.name();
			return new ShareGrant(new RateLimitResult(decisions, timestamp, name), extra);
		};
	}

}
