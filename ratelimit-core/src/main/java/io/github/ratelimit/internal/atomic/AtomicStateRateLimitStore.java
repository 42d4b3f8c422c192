package io.github.ratelimit.internal.atomic;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.Supplier;

import org.jspecify.annotations.Nullable;

import io.github.ratelimit.internal.core.BucketState;
import io.github.ratelimit.internal.core.BucketStateCodec;
import io.github.ratelimit.internal.core.RateLimitClock;
import io.github.ratelimit.store.Acquisition;
import io.github.ratelimit.store.AtomicStateStorage;
import io.github.ratelimit.store.BucketKey;
import io.github.ratelimit.store.BucketSnapshot;
import io.github.ratelimit.store.RateLimit;
import io.github.ratelimit.store.RateLimitDecision;
import io.github.ratelimit.store.RateLimitResult;
import io.github.ratelimit.store.RateLimitStore;

/**
 * A complete store over an {@link AtomicStateStorage}: each call is one atomic step of the
 * storage, in which the algorithms of ratelimit-core decide on the states it read, decoded
 * with {@link BucketStateCodec}, and the states they changed are written back with the
 * time after which they no longer matter.
 * <p>
 * A request's limits are decided in one step, all-or-nothing: a request that one enforced
 * limit rejects writes nothing. A state of another algorithm than the limit's (the limit
 * was reconfigured), of an unknown format or cut short is read as a fresh bucket, the same
 * as no state. Decisions are taken at the storage's time, so that every instance sharing it
 * agrees; a test passes a clock instead.
 * <p>
 * A storage that blocks (a database over JDBC) is given a timeout: each call then runs on a
 * bounded pool of the store's own, a caller waits at most the timeout, and the asynchronous
 * methods never run the storage on the caller's thread.
 */
public final class AtomicStateRateLimitStore implements RateLimitStore, AutoCloseable {

	private static final Comparator<Acquisition> BY_KEY = Comparator
		.comparing((Acquisition acquisition) -> acquisition.limit().name())
		.thenComparing(Acquisition::identity);

	private final AtomicStateStorage storage;

	private final String name;

	private final @Nullable RateLimitClock clock;

	private final @Nullable BlockingOffload offload;

	private AtomicStateRateLimitStore(Builder builder) {
		this.storage = builder.storage;
		this.name = builder.storage.name();
		this.clock = builder.clock;
		this.offload = (builder.timeout != null)
				? new BlockingOffload("ratelimit-" + this.name, builder.threads, builder.timeout) : null;
	}

	/**
	 * Starts building a store.
	 * @param storage where the states are kept
	 * @return a builder
	 */
	public static Builder builder(AtomicStateStorage storage) {
		return new Builder(storage);
	}

	@Override
	public RateLimitResult tryAcquire(List<Acquisition> acquisitions, long maxDelayMicros) {
		if (acquisitions.isEmpty()) {
			return new RateLimitResult(List.of(), now(), this.name);
		}
		RateLimitStore.requireDistinct(acquisitions);
		return call(() -> decideNow(acquisitions, maxDelayMicros));
	}

	@Override
	public CompletionStage<RateLimitResult> tryAcquireAsync(List<Acquisition> acquisitions, long maxDelayMicros) {
		if (this.offload == null || acquisitions.isEmpty()) {
			return RateLimitStore.super.tryAcquireAsync(acquisitions, maxDelayMicros);
		}
		RateLimitStore.requireDistinct(acquisitions);
		return this.offload.submit(() -> decideNow(acquisitions, maxDelayMicros));
	}

	@Override
	public void refund(List<Acquisition> acquisitions, RateLimitResult decided) {
		if (!acquisitions.isEmpty()) {
			call(() -> refundNow(acquisitions, decided));
		}
	}

	@Override
	public CompletionStage<Void> refundAsync(List<Acquisition> acquisitions, RateLimitResult decided) {
		if (this.offload == null || acquisitions.isEmpty()) {
			return RateLimitStore.super.refundAsync(acquisitions, decided);
		}
		return this.offload.submit(() -> refundNow(acquisitions, decided));
	}

	/**
	 * Settles every acquisition in one update of the storage: a charge writes a state
	 * even where none was kept, and is kept as long as its debt lasts.
	 */
	@Override
	public void settle(List<Acquisition> reserved, RateLimitResult decided, long[] actualCosts) {
		RateLimitStore.requireSettleable(reserved, actualCosts);
		if (!reserved.isEmpty()) {
			long[] actual = actualCosts.clone();
			call(() -> settleNow(reserved, decided, actual));
		}
	}

	@Override
	public CompletionStage<Void> settleAsync(List<Acquisition> reserved, RateLimitResult decided,
			long[] actualCosts) {
		if (this.offload == null || reserved.isEmpty()) {
			return RateLimitStore.super.settleAsync(reserved, decided, actualCosts);
		}
		try {
			RateLimitStore.requireSettleable(reserved, actualCosts);
		}
		catch (IllegalArgumentException ex) {
			return CompletableFuture.failedFuture(ex);
		}
		long[] actual = actualCosts.clone();
		return this.offload.submit(() -> settleNow(reserved, decided, actual));
	}

	private @Nullable Void settleNow(List<Acquisition> reserved, RateLimitResult decided, long[] actualCosts) {
		List<Acquisition> sorted = sorted(reserved);
		long[] actual = new long[sorted.size()];
		for (int i = 0; i < actual.length; i++) {
			actual[i] = (sorted == reserved) ? actualCosts[i] : actualCosts[reserved.indexOf(sorted.get(i))];
		}
		return this.storage.update(keys(sorted), (transaction) -> {
			long now = now(transaction);
			for (int i = 0; i < sorted.size(); i++) {
				Acquisition acquisition = sorted.get(i);
				RateLimit limit = acquisition.limit();
				if (actual[i] == acquisition.cost()) {
					continue;
				}
				BucketState state = read(limit, transaction.state(i));
				if (state == null && actual[i] < acquisition.cost()) {
					// nothing kept, nothing to give back
					continue;
				}
				state = (state != null) ? state : BucketState.create(limit);
				state.settle(limit, decided.timestampMicros(), now, acquisition.cost(), actual[i]);
				write(transaction, i, limit, state, state.overdraftMicros(limit, now));
			}
			return null;
		});
	}

	private RateLimitResult decideNow(List<Acquisition> acquisitions, long maxDelayMicros) {
		List<Acquisition> sorted = sorted(acquisitions);
		return inOrder(acquisitions, sorted,
				this.storage.update(keys(sorted), (transaction) -> decide(sorted, transaction, maxDelayMicros)));
	}

	private @Nullable Void refundNow(List<Acquisition> acquisitions, RateLimitResult decided) {
		List<Acquisition> sorted = sorted(acquisitions);
		return this.storage.update(keys(sorted), (transaction) -> {
			for (int i = 0; i < sorted.size(); i++) {
				Acquisition acquisition = sorted.get(i);
				BucketState state = read(acquisition.limit(), transaction.state(i));
				if (state != null) {
					state.refund(acquisition.limit(), decided.timestampMicros(), acquisition.cost());
					// a debt settled earlier keeps the state beyond its idle time
					write(transaction, i, acquisition.limit(), state,
							state.overdraftMicros(acquisition.limit(), now(transaction)));
				}
			}
			return null;
		});
	}

	@Override
	public BucketSnapshot inspect(RateLimit limit, String identity) {
		return call(() -> this.storage.read(List.of(new BucketKey(limit.name(), identity)), (transaction) -> {
			long now = now(transaction);
			BucketState state = read(limit, transaction.state(0));
			boolean exists = (state != null);
			RateLimitDecision probe = (exists ? state : BucketState.create(limit)).check(limit, now, 1);
			return BucketSnapshot.of(probe, identity, exists, this.name);
		}));
	}

	@Override
	public boolean reset(RateLimit limit, String identity) {
		return call(() -> this.storage.delete(new BucketKey(limit.name(), identity)));
	}

	@Override
	public void resetAll() {
		call(() -> {
			this.storage.deleteAll();
			return null;
		});
	}

	@Override
	public String name() {
		return this.name;
	}

	/**
	 * The storage the store decides on.
	 * @return the storage
	 */
	public AtomicStateStorage storage() {
		return this.storage;
	}

	/** Stops the pool of a blocking storage; calls made afterwards fail. */
	@Override
	public void close() {
		if (this.offload != null) {
			this.offload.close();
		}
	}

	/**
	 * Decides every acquisition at the transaction's time; writes the changed states only
	 * when every enforced limit admits.
	 */
	private RateLimitResult decide(List<Acquisition> sorted, AtomicStateStorage.Transaction transaction,
			long maxDelayMicros) {
		long now = now(transaction);
		int count = sorted.size();
		BucketState[] states = new BucketState[count];
		RateLimitDecision[] decisions = new RateLimitDecision[count];
		boolean allowed = true;
		for (int i = 0; i < count; i++) {
			Acquisition acquisition = sorted.get(i);
			BucketState state = read(acquisition.limit(), transaction.state(i));
			states[i] = (state != null) ? state : BucketState.create(acquisition.limit());
			decisions[i] = states[i].check(acquisition.limit(), now, acquisition.cost(), maxDelayMicros);
			allowed &= !decisions[i].rejects();
		}
		for (int i = 0; i < count; i++) {
			Acquisition acquisition = sorted.get(i);
			if (allowed && decisions[i].allowed()) {
				states[i].commit(acquisition.limit(), now, acquisition.cost());
				write(transaction, i, acquisition.limit(), states[i],
						Math.max(maxDelayMicros, states[i].overdraftMicros(acquisition.limit(), now)));
			}
			else {
				decisions[i] = decisions[i].uncommitted(acquisition.cost());
			}
		}
		return new RateLimitResult(Arrays.asList(decisions), now, this.name);
	}

	/** The state the bytes hold for a limit, or {@code null} for a fresh bucket. */
	private static @Nullable BucketState read(RateLimit limit, byte @Nullable [] bytes) {
		if (bytes == null || !BucketStateCodec.holds(limit.algorithm(), bytes)) {
			return null;
		}
		try {
			return BucketStateCodec.decode(limit.algorithm(), bytes);
		}
		catch (IllegalArgumentException ex) {
			// bytes this version cannot read decide as a fresh bucket, as no state would
			return null;
		}
	}

	/**
	 * Writes a state with the time after which it no longer matters: one idle time after
	 * this decision, and after the furthest slot it may have reserved or the end of a debt
	 * it holds ({@code extraMicros}). The expiry is the
	 * storage's time even when a test clock decides, since the storage compares it with its
	 * own.
	 */
	private static void write(AtomicStateStorage.Transaction transaction, int index, RateLimit limit,
			BucketState state, long extraMicros) {
		transaction.write(index, BucketStateCodec.encode(state),
				transaction.nowMicros() + limit.idleTtlMicros() + extraMicros);
	}

	private long now(AtomicStateStorage.Transaction transaction) {
		return (this.clock != null) ? this.clock.nowMicros() : transaction.nowMicros();
	}

	private long now() {
		return (this.clock != null) ? this.clock.nowMicros() : RateLimitClock.system().nowMicros();
	}

	/** Runs a storage call on the pool when the storage blocks, else here. */
	private <T> T call(Supplier<T> call) {
		return (this.offload != null) ? this.offload.call(call) : call.get();
	}

	private static List<Acquisition> sorted(List<Acquisition> acquisitions) {
		if (acquisitions.size() == 1) {
			return acquisitions;
		}
		List<Acquisition> sorted = new ArrayList<>(acquisitions);
		sorted.sort(BY_KEY);
		return sorted;
	}

	private static List<BucketKey> keys(List<Acquisition> sorted) {
		List<BucketKey> keys = new ArrayList<>(sorted.size());
		for (Acquisition acquisition : sorted) {
			keys.add(acquisition.key());
		}
		return keys;
	}

	/** The result with its decisions in the order the acquisitions were asked. */
	private static RateLimitResult inOrder(List<Acquisition> asked, List<Acquisition> sorted, RateLimitResult result) {
		if (asked == sorted) {
			return result;
		}
		List<RateLimitDecision> decisions = new ArrayList<>(asked.size());
		for (Acquisition acquisition : asked) {
			decisions.add(result.decisions().get(sorted.indexOf(acquisition)));
		}
		return new RateLimitResult(decisions, result.timestampMicros(), result.store());
	}

	/**
	 * Builds an {@link AtomicStateRateLimitStore}.
	 */
	public static final class Builder {

		private final AtomicStateStorage storage;

		private @Nullable RateLimitClock clock;

		private @Nullable Duration timeout;

		private int threads = 32;

		private Builder(AtomicStateStorage storage) {
			this.storage = Objects.requireNonNull(storage, "storage must not be null");
		}

		/**
		 * Decides at this clock's time instead of the storage's: what tests do.
		 * @param clock the clock, or {@code null} for the storage's time
		 * @return this builder
		 */
		public Builder clock(@Nullable RateLimitClock clock) {
			this.clock = clock;
			return this;
		}

		/**
		 * Runs every storage call on a pool of at most {@code threads} threads of the
		 * store's own, waiting at most {@code timeout} for it; for a storage that blocks.
		 * @param timeout longest wait for one call
		 * @param threads most calls running at once
		 * @return this builder
		 */
		public Builder blocking(Duration timeout, int threads) {
			this.timeout = Objects.requireNonNull(timeout, "timeout must not be null");
			this.threads = threads;
			return this;
		}

		/**
		 * Builds the store.
		 * @return the store
		 */
		public AtomicStateRateLimitStore build() {
			return new AtomicStateRateLimitStore(this);
		}

	}

}
