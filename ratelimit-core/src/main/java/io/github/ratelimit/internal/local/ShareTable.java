package io.github.ratelimit.internal.local;

import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import java.util.function.Predicate;

import io.github.ratelimit.internal.core.AlgorithmSpec;
import io.github.ratelimit.store.Acquisition;
import io.github.ratelimit.store.RateLimit;
import io.github.ratelimit.store.RateLimitStore;

/**
 * The shares this instance holds, by limit name and identity, bounded in number, and which
 * limits may have one at all.
 */
final class ShareTable {

	private final Map<String, Map<String, Share>> shares = new ConcurrentHashMap<>();

	private final AtomicInteger count = new AtomicInteger();

	private final Predicate<RateLimit> exact;

	private final int maximum;

	ShareTable(Predicate<RateLimit> exact, int maximum) {
		this.exact = exact;
		this.maximum = maximum;
	}

	/**
	 * Whether a limit is decided against shares: not a shadow limit, an algorithm whose
	 * units can be shared, and not a limit the application wants exact.
	 */
	boolean eligible(RateLimit limit) {
		return !limit.shadow() && AlgorithmSpec.of(limit.algorithm()).shareable() && !this.exact.test(limit);
	}

	boolean allEligible(List<Acquisition> acquisitions) {
		for (Acquisition acquisition : acquisitions) {
			if (!eligible(acquisition.limit())) {
				return false;
			}
		}
		return true;
	}

	/**
	 * The shares of the acquisitions, created where missing; null when any is decided by
	 * the shared store (delayed, not eligible, or beyond the bound on shares).
	 */
	Share[] owned(List<Acquisition> acquisitions, long maxDelayMicros) {
		if (maxDelayMicros != 0 || acquisitions.isEmpty() || !allEligible(acquisitions)) {
			return null;
		}
		RateLimitStore.requireDistinct(acquisitions);
		Share[] owned = new Share[acquisitions.size()];
		for (int i = 0; i < owned.length; i++) {
			Acquisition acquisition = acquisitions.get(i);
			Map<String, Share> byIdentity = this.shares.get(acquisition.limit().name());
			if (byIdentity == null) {
				byIdentity = this.shares.computeIfAbsent(acquisition.limit().name(), (name) -> new ConcurrentHashMap<>());
			}
			Share share = byIdentity.get(acquisition.identity());
			if (share == null) {
				if (this.count.get() >= this.maximum) {
					return null;
				}
				Share created = new Share(acquisition.limit(), acquisition.identity());
				share = byIdentity.putIfAbsent(acquisition.identity(), created);
				if (share == null) {
					this.count.incrementAndGet();
					share = created;
				}
			}
			owned[i] = share;
		}
		return owned;
	}

	Share find(RateLimit limit, String identity) {
		Map<String, Share> byIdentity = this.shares.get(limit.name());
		return (byIdentity != null) ? byIdentity.get(identity) : null;
	}

	/** Forgets one bucket's share, marked removed so that nobody spends it any more. */
	void remove(RateLimit limit, String identity) {
		Map<String, Share> byIdentity = this.shares.get(limit.name());
		Share share = (byIdentity != null) ? byIdentity.remove(identity) : null;
		if (share != null) {
			synchronized (share) {
				share.removed = true;
			}
			this.count.decrementAndGet();
		}
	}

	/** Forgets a share a sync found idle, unless it was replaced meanwhile. */
	void forget(Share share) {
		Map<String, Share> byIdentity = this.shares.get(share.limit.name());
		if (byIdentity != null && byIdentity.remove(share.identity, share)) {
			this.count.decrementAndGet();
		}
	}

	/**
	 * Forgets every share, each handed to {@code removed} under its monitor after it is
	 * marked removed.
	 */
	void removeAll(Consumer<Share> removed) {
		for (Map<String, Share> byIdentity : this.shares.values()) {
			for (Share share : byIdentity.values()) {
				synchronized (share) {
					share.removed = true;
					removed.accept(share);
				}
			}
		}
		this.shares.clear();
		this.count.set(0);
	}

	/** Hands every share to {@code action}, outside its monitor. */
	void forEach(Consumer<Share> action) {
		for (Map<String, Share> byIdentity : this.shares.values()) {
			byIdentity.values().forEach(action);
		}
	}

	int size() {
		return this.count.get();
	}

	int maximum() {
		return this.maximum;
	}

}
