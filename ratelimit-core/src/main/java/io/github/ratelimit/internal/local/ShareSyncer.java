package io.github.ratelimit.internal.local;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import io.github.ratelimit.internal.core.ShareGrant;
import io.github.ratelimit.internal.core.ShareRequest;
import io.github.ratelimit.internal.core.ShareStore;
import io.github.ratelimit.store.Acquisition;
import io.github.ratelimit.store.RateLimit;
import io.github.ratelimit.store.RateLimitResult;
import io.github.ratelimit.store.RateLimitStore;

/**
 * Settles the shares with the shared store: every sync interval, on a thread of its own
 * between {@link #start()} and {@link #close()}, each share with demand takes more units
 * or gives back what exceeds its demand, and idle shares give everything back; on close,
 * every share goes back.
 */
final class ShareSyncer implements AutoCloseable {

	private static final long CLOSE_TIMEOUT_MILLIS = 2_000;

	private final RateLimitStore shared;

	private final ShareStore sharing;

	private final ShareTable table;

	private final LocalFirstSettings settings;

	private final long intervalMicros;

	private ScheduledExecutorService scheduler;

	private Thread thread;

	private boolean closed;

	ShareSyncer(RateLimitStore shared, ShareStore sharing, ShareTable table, LocalFirstSettings settings) {
		this.shared = shared;
		this.sharing = sharing;
		this.table = table;
		this.settings = settings;
		this.intervalMicros = settings.intervalMicros();
	}

	/**
	 * Starts syncing every interval on a daemon thread of its own, until {@link #close()}.
	 * Each sync waits for the replies of the one before. Does nothing once closed.
	 */
	synchronized void start() {
		if (this.scheduler != null || this.closed) {
			return;
		}
		this.scheduler = Executors.newSingleThreadScheduledExecutor((task) -> {
			Thread created = new Thread(task, "ratelimit-share-sync");
			created.setDaemon(true);
			synchronized (this) {
				this.thread = created;
			}
			return created;
		});
		this.scheduler.scheduleWithFixedDelay(this::syncAndWait, this.intervalMicros, this.intervalMicros,
				TimeUnit.MICROSECONDS);
	}

	/** Whether the sync thread runs. */
	synchronized boolean running() {
		return this.scheduler != null;
	}

	private void syncAndWait() {
		try {
			sync().get(Math.max(CLOSE_TIMEOUT_MILLIS, 20 * this.intervalMicros / 1000), TimeUnit.MILLISECONDS);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
		catch (TimeoutException | RuntimeException | ExecutionException ex) {
			warn("Rate limit share sync failed: " + ex);
		}
	}

	/**
	 * Settles every share with the shared store, all calls sent at once: a share that had
	 * demand in the last interval takes units up to about two intervals of it, or gives
	 * back what exceeds that; an idle share gives everything back, and is forgotten after a
	 * second idle interval.
	 * @return completes when every call has been answered (failures are logged, and leave
	 * the share as it was)
	 */
	CompletableFuture<Void> sync() {
		long now = this.settings.clock().nowMicros();
		List<CompletableFuture<?>> calls = new ArrayList<>();
		this.table.forEach((share) -> {
			boolean forget;
			// the calls are issued (not awaited) under the share's lock: a request that then
			// asks the shared store for this bucket is sent after them, on the same
			// connection, and so finds what they gave back
			synchronized (share) {
				if (share.removed) {
					return;
				}
				share.settle(now);
				forget = share.idleSyncs >= 2 && share.units == 0 && !share.refreshing;
				if (forget) {
					share.removed = true;
				}
				giveBack(share, share.giveBack, share.grantedAt, calls);
				if (share.want > 0) {
					calls.add(refresh(share, share.want, now));
				}
			}
			if (forget) {
				this.table.forget(share);
			}
		});
		return CompletableFuture.allOf(calls.toArray(CompletableFuture[]::new));
	}

	private CompletableFuture<?> refresh(Share share, long want, long now) {
		CompletionStage<ShareGrant> call;
		try {
			call = this.sharing.grantAsync(List.of(new ShareRequest(share.limit, share.identity, 0, want)));
		}
		catch (RuntimeException ex) {
			call = CompletableFuture.failedFuture(ex);
		}
		return call.handle((granted, failure) -> {
			CompletableFuture<Void> refilled;
			synchronized (share) {
				share.refreshing = false;
				refilled = share.refill;
				if (failure == null) {
					share.granted(granted.result().decisions().get(0), granted.extra()[0], want,
							granted.result().timestampMicros(), now, this.intervalMicros);
					if (share.removed) {
						// closed or reset meanwhile: nobody here will spend what came
						giveBack(share, share.takeAll(now), share.grantedAt, new ArrayList<>());
					}
				}
			}
			if (failure != null) {
				warn("Rate limit share sync failed: " + failure);
			}
			if (refilled != null) {
				refilled.complete(null);
			}
			return null;
		}).toCompletableFuture();
	}

	/**
	 * Gives units of a share back to the shared store, refunded into the window they were
	 * granted in; the call is added to {@code calls}.
	 */
	void giveBack(Share share, long units, long grantedAt, List<CompletableFuture<?>> calls) {
		if (units <= 0) {
			return;
		}
		RateLimitResult grantedIn = new RateLimitResult(List.of(), grantedAt, this.shared.name());
		RateLimit limit = share.limit;
		CompletionStage<Void> call;
		try {
			call = this.shared.refundAsync(
					List.of(new Acquisition(limit, share.identity, Math.min(units, limit.capacity()))), grantedIn);
		}
		catch (RuntimeException ex) {
			call = CompletableFuture.failedFuture(ex);
		}
		calls.add(call.exceptionally((failure) -> {
			// the units stay taken until the bucket refills or its window ends
			warn("Rate limit share could not be given back: " + failure);
			return null;
		}).toCompletableFuture());
	}

	/**
	 * Stops the sync thread, waiting a short time for it to end, and gives every share back
	 * to the shared store, waiting a short time for it to answer: units this instance held
	 * are not lost to the others when it stops.
	 */
	@Override
	public void close() {
		ScheduledExecutorService running;
		Thread syncing;
		synchronized (this) {
			running = this.scheduler;
			syncing = this.thread;
			this.scheduler = null;
			this.thread = null;
			this.closed = true;
		}
		if (running != null) {
			// the thread ends here: none outlives the store
			running.shutdownNow();
			await(() -> running.awaitTermination(CLOSE_TIMEOUT_MILLIS, TimeUnit.MILLISECONDS));
		}
		if (syncing != null) {
			await(() -> syncing.join(CLOSE_TIMEOUT_MILLIS));
		}
		List<CompletableFuture<?>> calls = new ArrayList<>();
		long now = this.settings.clock().nowMicros();
		this.table.removeAll((share) -> giveBack(share, share.takeAll(now), share.grantedAt, calls));
		await(() -> CompletableFuture.allOf(calls.toArray(CompletableFuture[]::new))
			.get(CLOSE_TIMEOUT_MILLIS, TimeUnit.MILLISECONDS));
	}

	private void await(Wait wait) {
		try {
			wait.run();
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
		catch (ExecutionException | TimeoutException | RuntimeException ex) {
			warn("Rate limit shares were not all given back: " + ex);
		}
	}

	@FunctionalInterface
	private interface Wait {

		void run() throws InterruptedException, ExecutionException, TimeoutException;

	}

	private void warn(String message) {
		this.settings.failureLog().log(message, this.settings.warn());
	}

}
