/**
 * Internal: the in-memory store, a bounded table of buckets decided in place. Not API:
 * any type here may change in any release.
 */
@NullMarked
package io.github.ratelimit.internal.memory;

import org.jspecify.annotations.NullMarked;
