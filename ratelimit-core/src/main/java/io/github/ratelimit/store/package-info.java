/**
 * The store SPI: {@link io.github.ratelimit.store.RateLimitStore} decides acquisitions of
 * limits atomically, and the types its methods take and return. An application's own store
 * implements this interface; the starter's stores (memory, Redis) and decorators (failover,
 * local-first, observed) live in internal packages.
 */
@NullMarked
package io.github.ratelimit.store;

import org.jspecify.annotations.NullMarked;
