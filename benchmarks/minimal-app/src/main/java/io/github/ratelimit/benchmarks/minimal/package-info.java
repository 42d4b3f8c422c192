/**
 * The minimal-handler benchmark's application: one answer, three ways of limiting it.
 */
@NullMarked
package io.github.ratelimit.benchmarks.minimal;

import org.jspecify.annotations.NullMarked;
