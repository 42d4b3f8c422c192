/**
 * Internal: overload protection. An adaptive limit on calls in flight per instance,
 * learned from latency and failures, that admits requests by priority. Not API: any type
 * here may change in any release.
 */
@NullMarked
package io.github.ratelimit.internal.overload;

import org.jspecify.annotations.NullMarked;
