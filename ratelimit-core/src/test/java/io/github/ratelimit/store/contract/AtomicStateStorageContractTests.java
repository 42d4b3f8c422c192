package io.github.ratelimit.store.contract;

import io.github.ratelimit.internal.atomic.AtomicStateRateLimitStore;
import io.github.ratelimit.store.AtomicStateStorage;
import io.github.ratelimit.store.RateLimitStore;
import io.github.ratelimit.store.RateLimitStores;

/**
 * The store contract, run against the store that an {@link AtomicStateStorage} becomes
 * with {@link RateLimitStores#atomic(AtomicStateStorage)}: an engine's storage test
 * extends this class and creates its storage, empty. The store decides at the test's
 * clock instead of the storage's time; the storage keeps expiring states in its own.
 * <p>
 * The suite is in ratelimit-core's test-jar ({@code io.github.ratelimit:ratelimit-core},
 * {@code <type>test-jar</type>}, or the classifier {@code tests} with Gradle, in the test
 * scope), which a test needs with JUnit Jupiter and AssertJ. Then:
 * <pre class="code">
 * class MyStorageContractTests extends AtomicStateStorageContractTests {
 *
 * 	&#64;Override
 * 	protected AtomicStateStorage createStorage() {
 * 		return new MyStorage(dataSource);
 * 	}
 *
 * }
 * </pre>
 * A storage that a test can make fail overrides {@link #failStore()} and
 * {@link #recoverStore()} too, so that the failover test runs.
 */
public abstract class AtomicStateStorageContractTests extends RateLimitStoreContractTests {

	/**
	 * Creates the storage under test, holding no state: a new one, or one emptied with
	 * {@link AtomicStateStorage#deleteAll()}.
	 * @return the storage
	 */
	protected abstract AtomicStateStorage createStorage();

	@Override
	protected RateLimitStore createStore(MutableClock clock) {
		return AtomicStateRateLimitStore.builder(createStorage()).clock(clock).build();
	}

}
