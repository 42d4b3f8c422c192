package io.github.ratelimit.internal.local;

import java.time.Duration;
import java.util.List;
import java.util.Set;

import org.junit.jupiter.api.Test;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.internal.core.ShareGrant;
import io.github.ratelimit.internal.core.ShareRequest;
import io.github.ratelimit.internal.core.ShareStore;
import io.github.ratelimit.internal.core.ThrottledLog;
import io.github.ratelimit.internal.memory.InMemoryRateLimitStore;
import io.github.ratelimit.store.Acquisition;
import io.github.ratelimit.store.BucketSnapshot;
import io.github.ratelimit.store.RateLimit;
import io.github.ratelimit.store.RateLimitResult;
import io.github.ratelimit.store.RateLimitStore;
import io.github.ratelimit.store.RateLimitStores;
import io.github.ratelimit.store.contract.MutableClock;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * No sync thread outlives its store: closing a local-first store, alone or inside a chain,
 * ends its thread and gives its shares back.
 */
class LocalFirstCloseTests {

	private static final String SYNC_THREAD = "ratelimit-share-sync";

	private static final RateLimit LIMIT = RateLimit.of("search", Algorithm.TOKEN_BUCKET, 100, Duration.ofHours(1));

	private final MutableClock clock = new MutableClock();

	private final SharedStore shared = new SharedStore(new InMemoryRateLimitStore(this.clock, 1_000), this.clock);

	@Test
	void closingTheStoreEndsItsSyncThreadAndGivesItsSharesBack() {
		long before = syncThreads();
		LocalFirstRateLimitStore store = store();
		store.start();
		assertThat(store.syncing()).isTrue();
		assertThat(syncThreads()).isEqualTo(before + 1);
		// two requests: the second takes a share beyond its cost
		store.tryAcquire(List.of(new Acquisition(LIMIT, "alice", 1)));
		store.tryAcquire(List.of(new Acquisition(LIMIT, "alice", 1)));
		assertThat(this.shared.inspect(LIMIT, "alice").remaining()).isLessThan(98);
		store.close();
		assertThat(store.syncing()).isFalse();
		assertThat(syncThreads()).isEqualTo(before);
		assertThat(this.shared.inspect(LIMIT, "alice").remaining()).isEqualTo(98);
	}

	@Test
	void aClosedStoreStartsNoThread() {
		long before = syncThreads();
		LocalFirstRateLimitStore store = store();
		store.close();
		store.start();
		assertThat(store.syncing()).isFalse();
		assertThat(syncThreads()).isEqualTo(before);
	}

	@Test
	void closingAChainEndsTheSyncThreadOfItsLocalFirstStore() throws Exception {
		long before = syncThreads();
		RateLimitStore chain = RateLimitStores.builder(this.shared)
			.clock(this.clock::nowMicros)
			.localFirst(Duration.ofMillis(5), Set.of(), 100)
			.observed((name, failure) -> {
			})
			.fallback(RateLimitStores.inMemory(100), 0.5)
			.build();
		assertThat(syncThreads()).isEqualTo(before + 1);
		assertThat(chain).isInstanceOf(AutoCloseable.class);
		((AutoCloseable) chain).close();
		assertThat(syncThreads()).isEqualTo(before);
	}

	private LocalFirstRateLimitStore store() {
		// a sync resets the demand a share is sized by: syncing once an hour, none falls
		// between the test's two requests however long the machine pauses the test
		return new LocalFirstRateLimitStore(this.shared, this.shared, new LocalFirstSettings(this.clock,
				Duration.ofHours(1), (limit) -> false, 100, new ThrottledLog(0, System::nanoTime), (message) -> {
				}));
	}

	private static long syncThreads() {
		return Thread.getAllStackTraces()
			.keySet()
			.stream()
			.filter((thread) -> thread.isAlive() && thread.getName().equals(SYNC_THREAD))
			.count();
	}

	/** A shared store that grants shares in two steps, as the in-memory store can. */
	private static final class SharedStore implements RateLimitStore, ShareStore {

		private final RateLimitStore buckets;

		private final ShareStore sharing;

		SharedStore(RateLimitStore buckets, MutableClock clock) {
			this.buckets = buckets;
			this.sharing = ShareStore.over(buckets, clock);
		}

		@Override
		public ShareGrant grant(List<ShareRequest> requests) {
			return this.sharing.grant(requests);
		}

		@Override
		public RateLimitResult tryAcquire(List<Acquisition> acquisitions, long maxDelayMicros) {
			return this.buckets.tryAcquire(acquisitions, maxDelayMicros);
		}

		@Override
		public void refund(List<Acquisition> acquisitions, RateLimitResult decided) {
			this.buckets.refund(acquisitions, decided);
		}

		@Override
		public BucketSnapshot inspect(RateLimit limit, String identity) {
			return this.buckets.inspect(limit, identity);
		}

	}

}
