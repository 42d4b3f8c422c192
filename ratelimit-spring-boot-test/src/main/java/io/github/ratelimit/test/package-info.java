/**
 * The test kit: {@code @AutoConfigureRateLimitTest} decides in memory on a controllable
 * clock, resets buckets between tests, and records decisions for assertions.
 */
@NullMarked
package io.github.ratelimit.test;

import org.jspecify.annotations.NullMarked;
