/**
 * The user API: {@link io.github.ratelimit.RateLimited} on a method or type, the
 * {@link io.github.ratelimit.Algorithm algorithms}, {@link io.github.ratelimit.KeySource key
 * sources}, {@link io.github.ratelimit.CalendarPeriod calendar periods} and
 * {@link io.github.ratelimit.FailMode fail modes} it names, the
 * {@link io.github.ratelimit.KeyResolver} and {@link io.github.ratelimit.PlanResolver}
 * extension points over the {@link io.github.ratelimit.RateLimitRequest request view}, and the
 * exceptions a limited call or an invalid configuration raises. Nothing here depends on
 * Spring.
 */
@NullMarked
package io.github.ratelimit;

import org.jspecify.annotations.NullMarked;
