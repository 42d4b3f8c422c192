package io.github.ratelimit.internal.core;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;

import io.github.ratelimit.store.Acquisition;
import io.github.ratelimit.store.BucketKey;

/**
 * A caller's wait for the release of permits held in flight (by a concurrency limit): it
 * completes as soon as a call gives back a permit of one of the buckets it watches, on
 * this instance. Releases by other instances sharing Redis are not heard; a waiter also
 * retries when its rejection's {@code Retry-After} (at most a second) has passed.
 * <p>
 * Watch before deciding, so that a release between the decision and the wait is not
 * missed, and {@link #close()} when done waiting: until then the limiter keeps the wait.
 */
public final class ReleaseWait implements AutoCloseable {

	private final Signals signals;

	private final List<BucketKey> keys;

	private final CompletableFuture<Void> released = new CompletableFuture<>();

	private final AtomicBoolean closed = new AtomicBoolean();

	private ReleaseWait(Signals signals, List<BucketKey> keys) {
		this.signals = signals;
		this.keys = keys;
	}

	/**
	 * Completes when a watched bucket has a permit given back.
	 * @return the future, never completing exceptionally
	 */
	public CompletableFuture<Void> released() {
		return this.released;
	}

	/**
	 * Waits for a release, at most {@code micros}.
	 * @param micros the longest wait
	 * @return whether a permit was given back meanwhile
	 * @throws InterruptedException when interrupted while waiting
	 */
	public boolean await(long micros) throws InterruptedException {
		try {
			this.released.get(micros, TimeUnit.MICROSECONDS);
			return true;
		}
		catch (TimeoutException ex) {
			return false;
		}
		catch (ExecutionException ex) {
			return true;
		}
	}

	/** Stops watching; closing again does nothing. */
	@Override
	public void close() {
		if (this.closed.compareAndSet(false, true)) {
			for (BucketKey key : this.keys) {
				this.signals.unwatch(key, this);
			}
		}
	}

	/**
	 * Who waits for which bucket: an entry per bucket some caller waits for right now,
	 * holding exactly the waits not yet closed, so the table never holds more than the
	 * callers waiting.
	 */
	static final class Signals {

		private final ConcurrentHashMap<BucketKey, Set<ReleaseWait>> byKey = new ConcurrentHashMap<>();

		/** Watches the held-in-flight buckets among acquisitions; {@code null} when there are none. */
		ReleaseWait watch(List<Acquisition> acquisitions) {
			List<BucketKey> keys = null;
			for (Acquisition acquisition : acquisitions) {
				if (AlgorithmSpec.of(acquisition.limit().algorithm()).heldInFlight()) {
					keys = (keys != null) ? keys : new ArrayList<>(2);
					keys.add(acquisition.key());
				}
			}
			if (keys == null) {
				return null;
			}
			ReleaseWait wait = new ReleaseWait(this, keys);
			for (BucketKey key : keys) {
				this.byKey.compute(key, (k, waits) -> {
					Set<ReleaseWait> current = (waits != null) ? waits : ConcurrentHashMap.newKeySet();
					current.add(wait);
					return current;
				});
			}
			return wait;
		}

		void unwatch(BucketKey key, ReleaseWait wait) {
			this.byKey.computeIfPresent(key, (k, waits) -> (waits.remove(wait) && waits.isEmpty()) ? null : waits);
		}

		/** Wakes whoever waits for the held-in-flight buckets among acquisitions given back. */
		void released(List<Acquisition> acquisitions) {
			if (this.byKey.isEmpty()) {
				return;
			}
			for (Acquisition acquisition : acquisitions) {
				if (AlgorithmSpec.of(acquisition.limit().algorithm()).heldInFlight()) {
					Set<ReleaseWait> waits = this.byKey.remove(acquisition.key());
					if (waits != null) {
						for (ReleaseWait wait : waits) {
							wait.released.complete(null);
						}
					}
				}
			}
		}

		/** How many buckets are watched now: for tests. */
		int watched() {
			return this.byKey.size();
		}

	}

}
