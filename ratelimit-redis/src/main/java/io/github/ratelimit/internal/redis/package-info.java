/**
 * Internal: the Redis store, deciding every algorithm in Lua scripts (from
 * {@code src-lua/}) over the application's Spring Data Redis connection. Not API: any type here
 * may change in any release.
 */
@NullMarked
package io.github.ratelimit.internal.redis;

import org.jspecify.annotations.NullMarked;
