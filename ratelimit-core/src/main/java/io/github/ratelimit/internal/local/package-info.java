/**
 * Internal: the local-first store, deciding on this instance against shares of the shared
 * store's buckets and settling with it in batches. Not API: any type here may change in
 * any release.
 */
@NullMarked
package io.github.ratelimit.internal.local;

import org.jspecify.annotations.NullMarked;
