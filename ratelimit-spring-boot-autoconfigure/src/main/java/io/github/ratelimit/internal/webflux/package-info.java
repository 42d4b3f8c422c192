/**
 * Internal: the WebFlux adapter from server exchanges to the request pipeline. Not API:
 * any type here may change in any release.
 */
@NullMarked
package io.github.ratelimit.internal.webflux;

import org.jspecify.annotations.NullMarked;
