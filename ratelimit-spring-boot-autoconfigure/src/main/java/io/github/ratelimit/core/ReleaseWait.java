package io.github.ratelimit.core;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * A caller's wait for the release of permits held in flight (by a concurrency limit): it
 * completes as soon as a call gives back a permit of one of the buckets it watches, on
 * this instance. Releases by other instances sharing Redis are not heard; a waiter also
 * retries when its rejection's {@code Retry-After} (at most a second) has passed.
 * <p>
 * Watch before deciding, so that a release between the decision and the wait is not
 * missed, and {@link #close()} when done waiting.
 */
public final class ReleaseWait implements AutoCloseable {

	private final Signals signals;

	private final List<BucketKey> keys;

	private final List<Signal> watched;

	private final CompletableFuture<Void> released = new CompletableFuture<>();

	private ReleaseWait(Signals signals, List<BucketKey> keys, List<Signal> watched) {
		this.signals = signals;
		this.keys = keys;
		this.watched = watched;
		for (Signal signal : watched) {
			signal.future.thenRun(() -> this.released.complete(null));
		}
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

	@Override
	public void close() {
		for (int i = 0; i < this.keys.size(); i++) {
			this.signals.unwatch(this.keys.get(i), this.watched.get(i));
		}
	}

	/** The next release of a bucket, shared by everyone waiting for it. */
	static final class Signal {

		final CompletableFuture<Void> future = new CompletableFuture<>();

		int waiters;

	}

	/**
	 * Who waits for which bucket: an entry per bucket some caller waits for right now, so
	 * the table never holds more than the callers waiting.
	 */
	static final class Signals {

		private final ConcurrentHashMap<BucketKey, Signal> byKey = new ConcurrentHashMap<>();

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
			List<Signal> watched = new ArrayList<>(keys.size());
			for (BucketKey key : keys) {
				watched.add(this.byKey.compute(key, (k, signal) -> {
					Signal current = (signal != null) ? signal : new Signal();
					current.waiters++;
					return current;
				}));
			}
			return new ReleaseWait(this, keys, watched);
		}

		void unwatch(BucketKey key, Signal signal) {
			this.byKey.computeIfPresent(key, (k, current) -> (current == signal && --current.waiters == 0) ? null
					: current);
		}

		/** Wakes whoever waits for the held-in-flight buckets among acquisitions given back. */
		void released(List<Acquisition> acquisitions) {
			if (this.byKey.isEmpty()) {
				return;
			}
			for (Acquisition acquisition : acquisitions) {
				if (AlgorithmSpec.of(acquisition.limit().algorithm()).heldInFlight()) {
					Signal signal = this.byKey.remove(acquisition.key());
					if (signal != null) {
						signal.future.complete(null);
					}
				}
			}
		}

	}

}
