/**
 * Internal: the {@code ratelimits} actuator endpoint and the health contribution. Not API: any type here may change
 * in any release.
 */
@NullMarked
package io.github.ratelimit.internal.actuate;

import org.jspecify.annotations.NullMarked;
