/**
 * Internal: interception of {@code @RateLimited} bean methods outside web requests. Not
 * API: any type here may change in any release.
 */
@NullMarked
package io.github.ratelimit.internal.aop;

import org.jspecify.annotations.NullMarked;
