/**
 * Internal: the client-side retry interceptor that honours a server's
 * {@code Retry-After} and {@code RateLimit} headers. Not API: any type here may change in any
 * release.
 */
@NullMarked
package io.github.ratelimit.internal.client;

import org.jspecify.annotations.NullMarked;
