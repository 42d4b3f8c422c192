package io.github.ratelimit.internal.memory;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import org.junit.jupiter.api.Test;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.store.RateLimit;

import static org.assertj.core.api.Assertions.assertThat;

class BucketTableTests {

	private static final RateLimit ORDERS = RateLimit.of("orders", Algorithm.TOKEN_BUCKET, 5, Duration.ofMinutes(1));

	private static final RateLimit SEARCH = RateLimit.of("search", Algorithm.FIXED_WINDOW, 5, Duration.ofMinutes(1));

	private final BucketTable table = new BucketTable(4);

	/** The identity of every bucket made, which the bucket keeps only as bytes. */
	private final Map<Bucket, String> identities = Collections.synchronizedMap(new IdentityHashMap<>());

	@Test
	void findsEveryBucketAddedAndNoBucketRemovedThroughGrowthAndRemovals() {
		List<Bucket> kept = new ArrayList<>();
		List<Bucket> removed = new ArrayList<>();
		for (int i = 0; i < 20_000; i++) {
			Bucket bucket = add(ORDERS, "client-" + i);
			if (i % 3 == 0) {
				this.table.remove(bucket);
				removed.add(bucket);
			}
			else {
				kept.add(bucket);
			}
		}
		for (int i = 0; i < 10_000; i++) {
			kept.add(add(SEARCH, "client-" + i));
		}
		assertThat(this.table.size()).isEqualTo(kept.size());
		assertThat(kept.stream().filter((bucket) -> find(bucket) != bucket)).as("kept buckets not found").isEmpty();
		assertThat(removed.stream().filter((bucket) -> find(bucket) != null)).as("removed buckets found").isEmpty();
		List<Bucket> seen = new ArrayList<>();
		this.table.forEach(seen::add);
		assertThat(new HashSet<>(seen)).hasSameSizeAs(seen).isEqualTo(new HashSet<>(kept));
	}

	@Test
	void keepsTheBucketAlreadyThereWhenAKeyIsAddedTwice() {
		Bucket first = add(ORDERS, "alice");
		Bucket second = new Bucket(this.table.hash("orders", "alice"), ORDERS, "alice");
		assertThat(this.table.putIfAbsent(second)).isSameAs(first);
		assertThat(this.table.size()).isOne();
		assertThat(this.table.get(second.hash, "orders", "alice")).isSameAs(first);
	}

	@Test
	void tellsKeysApartByLimitNameAndIdentity() {
		Bucket orders = add(ORDERS, "alice");
		Bucket search = add(SEARCH, "alice");
		Bucket bob = add(ORDERS, "bob");
		assertThat(this.table.get(this.table.hash("orders", "alice"), "orders", "alice")).isSameAs(orders);
		assertThat(this.table.get(this.table.hash("search", "alice"), "search", "alice")).isSameAs(search);
		assertThat(this.table.get(this.table.hash("orders", "bob"), "orders", "bob")).isSameAs(bob);
		assertThat(this.table.get(this.table.hash("search", "bob"), "search", "bob")).isNull();
	}

	@Test
	void hashesKeysWithASeedOfItsOwn() {
		// identities whose String hashes collide, as a client can choose them
		List<String> colliding = List.of("Aa", "BB", "AaAa", "AaBB", "BBAa", "BBBB");
		assertThat(colliding.stream().map(String::hashCode).distinct()).hasSize(2);
		assertThat(colliding.stream().map((identity) -> this.table.hash("orders", identity)).distinct()).hasSize(6);
		BucketTable other = new BucketTable(4);
		assertThat(colliding.stream().filter((identity) -> other.hash("orders", identity) != this.table.hash("orders",
				identity))).as("hashes that differ between two tables").isNotEmpty();
	}

	@Test
	void readersFindEveryBucketThatStaysWhileOthersComeAndGo() throws Exception {
		List<Bucket> stable = new ArrayList<>();
		for (int i = 0; i < 1_000; i++) {
			stable.add(add(ORDERS, "stable-" + i));
		}
		AtomicBoolean churning = new AtomicBoolean(true);
		ExecutorService executor = Executors.newFixedThreadPool(3);
		try {
			Future<?> writer = executor.submit(() -> {
				// the churn grows, rebuilds and empties tables under the readers
				for (int round = 0; round < 10; round++) {
					List<Bucket> added = new ArrayList<>();
					for (int i = 0; i < 5_000; i++) {
						added.add(add(SEARCH, "churn-" + round + "-" + i));
					}
					added.forEach(this.table::remove);
				}
				churning.set(false);
			});
			List<Future<Integer>> readers = new ArrayList<>();
			for (int r = 0; r < 2; r++) {
				readers.add(executor.submit(() -> {
					int misses = 0;
					for (int pass = 0; pass < 200 && (pass < 10 || churning.get()); pass++) {
						for (Bucket bucket : stable) {
							if (find(bucket) != bucket) {
								misses++;
							}
						}
					}
					return misses;
				}));
			}
			writer.get(60, TimeUnit.SECONDS);
			for (Future<Integer> reader : readers) {
				assertThat(reader.get(60, TimeUnit.SECONDS)).as("lookups that missed a bucket").isZero();
			}
		}
		finally {
			executor.shutdownNow();
			assertThat(executor.awaitTermination(30, TimeUnit.SECONDS)).isTrue();
		}
		assertThat(this.table.size()).isEqualTo(stable.size());
	}

	private Bucket add(RateLimit limit, String identity) {
		Bucket bucket = new Bucket(this.table.hash(limit.name(), identity), limit, identity);
		if (this.table.putIfAbsent(bucket) != null) {
			throw new AssertionError("a bucket was already there for " + identity);
		}
		this.identities.put(bucket, identity);
		return bucket;
	}

	private Bucket find(Bucket bucket) {
		return this.table.get(bucket.hash, bucket.limit.name(), this.identities.get(bucket));
	}

}
