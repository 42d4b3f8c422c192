/**
 * The store contract suite, published in ratelimit-core's test-jar: what a store must
 * decide, as tests that any store runs. {@link io.github.ratelimit.store.contract.RateLimitStoreContractTests}
 * proves a {@link io.github.ratelimit.store.RateLimitStore};
 * {@link io.github.ratelimit.store.contract.AtomicStateStorageContractTests} proves an
 * {@link io.github.ratelimit.store.AtomicStateStorage} through the store it becomes; both
 * decide at a {@link io.github.ratelimit.store.contract.MutableClock} that only the tests
 * move.
 */
@NullMarked
package io.github.ratelimit.store.contract;

import org.jspecify.annotations.NullMarked;
