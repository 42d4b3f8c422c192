/**
 * Spring Boot auto-configuration of rate limiting:
 * {@link io.github.ratelimit.autoconfigure.RateLimitAutoConfiguration},
 * {@link io.github.ratelimit.autoconfigure.RateLimitClientAutoConfiguration} and the
 * {@code ratelimit.*} {@link io.github.ratelimit.autoconfigure.RateLimitProperties properties}.
 * Every other type here is package-private.
 */
@NullMarked
package io.github.ratelimit.autoconfigure;

import org.jspecify.annotations.NullMarked;
