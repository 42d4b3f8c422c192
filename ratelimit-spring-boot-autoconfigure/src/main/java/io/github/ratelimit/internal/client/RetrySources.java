package io.github.ratelimit.internal.client;

import java.util.random.RandomGenerator;

import io.github.ratelimit.internal.core.RateLimitClock;

/**
 * The sources of time and randomness the retries of a call draw on.
 *
 * @param clock measures the time budget and dates {@code Retry-After} without a
 * {@code Date} header
 * @param sleeper waits between attempts
 * @param random draws the jittered back-off
 */
record RetrySources(RateLimitClock clock, RetrySleeper sleeper, RandomGenerator random) {
}
