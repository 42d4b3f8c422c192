/**
 * Internal: the PostgreSQL storage of bucket states, {@link JdbcStateStorage}, which
 * {@link io.github.ratelimit.store.RateLimitStores#atomic} turns into a complete store. Not
 * API: any type here may change in any release.
 */
@NullMarked
package io.github.ratelimit.internal.jdbc;

import org.jspecify.annotations.NullMarked;
