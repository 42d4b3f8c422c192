/**
 * The store contract suite, published in ratelimit-core's test-jar: what a store must
 * decide, as tests that any store runs. {@link io.github.ratelimit.store.contract.RateLimitStoreContractTests}
 * proves a {@link io.github.ratelimit.store.RateLimitStore};
 * {@link io.github.ratelimit.store.contract.AtomicStateStorageContractTests} proves an
 * {@link io.github.ratelimit.store.AtomicStateStorage} through the store it becomes;
 * {@link io.github.ratelimit.store.contract.SettleUnderConcurrencyTests} proves that costs
 * reserved and settled by many callers at once keep within the limit and leave nothing
 * reserved. All decide at a {@link io.github.ratelimit.store.contract.MutableClock} that
 * only the tests move.
 */
@NullMarked
package io.github.ratelimit.store.contract;

import org.jspecify.annotations.NullMarked;
