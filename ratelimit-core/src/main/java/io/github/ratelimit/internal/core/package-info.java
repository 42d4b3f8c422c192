/**
 * Internal: the algorithms and their state, limit definitions and resolution, the
 * limiter that waits for reserved slots, and the store decorators (failover, local-first,
 * observed). Not API: any type here may change in any release.
 */
@NullMarked
package io.github.ratelimit.internal.core;

import org.jspecify.annotations.NullMarked;
