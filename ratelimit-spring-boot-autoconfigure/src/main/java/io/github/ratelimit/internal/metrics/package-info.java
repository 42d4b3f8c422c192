/**
 * Internal: Micrometer meters ({@code ratelimit.*}) of decisions and stores. Not API:
 * any type here may change in any release.
 */
@NullMarked
package io.github.ratelimit.internal.metrics;

import org.jspecify.annotations.NullMarked;
