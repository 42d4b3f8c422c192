/**
 * Internal: the store built on an {@link io.github.ratelimit.store.AtomicStateStorage},
 * which decides with the algorithms of ratelimit-core over states read and written as
 * bytes, and the pool that bounds how long a blocking storage may hold a caller. Not API:
 * any type here may change in any release.
 */
@NullMarked
package io.github.ratelimit.internal.atomic;

import org.jspecify.annotations.NullMarked;
